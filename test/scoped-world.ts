// The data of the scoped-operator tests (issue 27 item 5): two traffic providers (A in the scope,
// B out) and two partners (X in, Y out), leads of each pair, their attempts, alerts and provider
// postback deliveries, and a role limited to A and X with an operator and a key holding it.
import assert from 'node:assert/strict';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import type { DB } from '../src/server/db/database.js';
import { nowIso } from '../src/server/db/ids.js';
import { ACCOUNT_WIDE } from '../src/server/modules/roles/scope.js';
import {
  insertAttempt,
  insertCampaign,
  insertFlow,
  insertLeads,
  insertPartner,
  insertTrafficProvider,
} from './fixtures.js';
import { call, login, newApiKey, OWNER, type TestApp } from './helpers.js';

/** What a scoped role may hold: every permission but the account-wide ones. */
export const SCOPED_PERMISSIONS = ALL_PERMISSIONS.filter((p) => !ACCOUNT_WIDE.includes(p));

async function insertEvent(
  db: DB,
  e: { type: string; lead_id?: string; partner_id?: string; traffic_provider_id?: string; data: object },
) {
  const row = await db
    .insertInto('events')
    .values({
      type: e.type,
      occurred_at: nowIso(),
      lead_id: e.lead_id ?? null,
      partner_id: e.partner_id ?? null,
      traffic_provider_id: e.traffic_provider_id ?? null,
      campaign_id: null,
      data: JSON.stringify(e.data),
      dedupe_key: null,
      fanned: 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function insertPostbackDelivery(db: DB, eventId: number | string, providerId: string, leadId: string) {
  const now = nowIso();
  const row = await db
    .insertInto('event_deliveries')
    .values({
      event_id: eventId,
      destination_kind: 'postback',
      destination_id: providerId,
      lead_id: leadId,
      state: 'delivered',
      attempts: 1,
      created_at: now,
      next_attempt_at: now,
      expires_at: now,
      lease_until: null,
      lease_token: null,
      last_attempt_at: now,
      last_status: 200,
      last_error: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/**
 * Two providers (A in scope, B out) and two partners (X in, Y out); a lead of each pair, an
 * undelivered one, their attempts, sale statuses, alerts and provider postback deliveries.
 */
export async function world(ta: TestApp) {
  const db = ta.db;
  const A = await insertTrafficProvider(db, { name: 'Provider InScopeA' });
  const B = await insertTrafficProvider(db, { name: 'Provider HiddenB' });
  const X = await insertPartner(db, { name: 'Partner InScopeX' });
  const Y = await insertPartner(db, { name: 'Partner HiddenY' });
  await db.updateTable('partners').set({ daily_cap: 100 }).where('id', 'in', [X, Y]).execute();
  const flow = await insertFlow(db, [X, Y], { name: 'Shared flow' });
  const cA = await insertCampaign(db, A, flow, { name: 'Campaign InScopeA' });
  const cB = await insertCampaign(db, B, flow, { name: 'Campaign HiddenB' });
  const now = Date.now();
  const delivered = (partner: string, sale: string) => ({
    partner_id: partner,
    status: 'delivered' as const,
    delivered_at: new Date(now - 60_000).toISOString(),
    status_updated_at: new Date(now - 60_000).toISOString(),
    ftd_at: new Date(now - 30_000).toISOString(),
    sale_status: sale,
    crg_bp: 1000,
    revenue_cents: 5000,
    cost_cents: 1000,
  });
  const leads = {
    AX: { traffic_provider_id: A, campaign_id: cA, flow_id: flow, ...delivered(X, 'SeenSaleAX'), last_name: 'SeenAX' },
    AY: {
      traffic_provider_id: A,
      campaign_id: cA,
      flow_id: flow,
      ...delivered(Y, 'HiddenSaleAY'),
      last_name: 'HiddenAY',
    },
    BX: {
      traffic_provider_id: B,
      campaign_id: cB,
      flow_id: flow,
      ...delivered(X, 'HiddenSaleBX'),
      last_name: 'HiddenBX',
    },
    BY: {
      traffic_provider_id: B,
      campaign_id: cB,
      flow_id: flow,
      ...delivered(Y, 'HiddenSaleBY'),
      last_name: 'HiddenBY',
    },
    // Refused by every partner: no partner of the scope has it.
    A0: {
      traffic_provider_id: A,
      campaign_id: cA,
      flow_id: flow,
      status: 'rejected' as const,
      reason: 'HiddenReasonA0',
      last_name: 'HiddenA0',
    },
  };
  const keys = Object.keys(leads) as (keyof typeof leads)[];
  const rows = keys.map((k) => ({ ...leads[k], email: `lead-${k.toLowerCase()}@example.test` }));
  const leadIds = await insertLeads(db, rows);
  const lead = Object.fromEntries(keys.map((k, i) => [k, leadIds[i]])) as Record<keyof typeof leads, string>;
  // The in-scope lead was offered to Y first: that attempt is Y's, not the scope's.
  await insertAttempt(db, {
    lead_id: lead.AX,
    partner_id: Y,
    attempt_no: 1,
    outcome: 'rejected',
    reason: 'HiddenReasonY',
  });
  await insertAttempt(db, { lead_id: lead.AX, partner_id: X, attempt_no: 2 });
  await insertAttempt(db, { lead_id: lead.AY, partner_id: Y, attempt_no: 1 });
  await insertAttempt(db, { lead_id: lead.BX, partner_id: X, attempt_no: 1 });
  await insertAttempt(db, { lead_id: lead.BY, partner_id: Y, attempt_no: 1 });
  await insertAttempt(db, {
    lead_id: lead.A0,
    partner_id: Y,
    attempt_no: 1,
    outcome: 'rejected',
    reason: 'HiddenReasonA0',
  });

  // Alerts about each partner and provider.
  const failing = (partner: string) => ({
    type: 'partner.failing',
    partner_id: partner,
    data: { failures: 5, paused: false, last_reason: 'x' },
  });
  await insertEvent(db, failing(X));
  await insertEvent(db, failing(Y));
  const silent = (provider: string) => ({
    type: 'traffic_provider.silent',
    traffic_provider_id: provider,
    data: { hours: 3, last_lead_at: null },
  });
  await insertEvent(db, silent(A));
  await insertEvent(db, silent(B));
  // Provider A's postbacks about its leads: one of X (in), one of Y (out).
  const leadEvent = (id: string, partner: string) => ({
    type: 'lead.delivered',
    lead_id: id,
    partner_id: partner,
    traffic_provider_id: A,
    data: { status: 'delivered', country: 'DE', sub_id1: null },
  });
  const deliveryIn = await insertPostbackDelivery(db, await insertEvent(db, leadEvent(lead.AX, X)), A, lead.AX);
  const deliveryOut = await insertPostbackDelivery(db, await insertEvent(db, leadEvent(lead.AY, Y)), A, lead.AY);

  // What must never come back to the scoped operator.
  const hidden = [
    B,
    'Provider HiddenB',
    Y,
    'Partner HiddenY',
    cB,
    'Campaign HiddenB',
    'HiddenReasonY',
    ...(['AY', 'BX', 'BY', 'A0'] as const).flatMap((k) => [
      lead[k],
      `Hidden${k}`,
      `lead-${k.toLowerCase()}@example.test`,
      ...(k === 'A0' ? ['HiddenReasonA0'] : [`HiddenSale${k}`]),
    ]),
  ];
  return { A, B, X, Y, flow, cA, cB, lead, deliveryIn, deliveryOut, hidden };
}

export type World = Awaited<ReturnType<typeof world>>;

/** A role limited to provider A and partner X, an operator holding it (signed in) and a key it made. */
export async function scopedOperator(ta: TestApp, w: World, permissions: string[] = SCOPED_PERMISSIONS) {
  const role = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/roles',
    payload: { name: 'Affiliate manager A/X', permissions, scope: { traffic_provider_ids: [w.A], partner_ids: [w.X] } },
  });
  assert.equal(role.statusCode, 201, role.body);
  assert.deepEqual(role.json().scope, { traffic_provider_ids: [w.A], partner_ids: [w.X] });
  const email = 'scoped@example.test';
  const password = 'scoped-password-1';
  const op = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/operators',
    payload: { email, name: 'Scoped', password, role_id: role.json().id, current_password: OWNER.password },
  });
  assert.equal(op.statusCode, 201, op.body);
  const token = await login(ta.app, email, password);
  const key = await newApiKey(ta, permissions, { token });
  return {
    roleId: role.json().id as string,
    operatorId: op.json().id as string,
    token,
    key: key.secret,
    keyId: key.id,
  };
}
