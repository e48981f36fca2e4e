// Rows written straight into the database, for tests of read paths (search, analytics) that
// need data before the intake API exists or in quantities the API would make slow.
import type { Insertable } from 'kysely';
import { hashSecret } from '../src/server/auth/credentials.js';
import type { DB } from '../src/server/db/database.js';
import { newId, nowIso } from '../src/server/db/ids.js';
import type { LeadAttemptsTable, LeadsTable } from '../src/server/db/tables.js';

let n = 0;
const next = () => `${process.pid}${++n}`;

export async function insertPartner(db: DB, over: Partial<{ name: string; status: 'active' | 'paused'; countries: string[] }> = {}) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('partners')
    .values({
      id,
      name: over.name ?? `Partner ${next()}`,
      status: over.status ?? 'active',
      countries: JSON.stringify(over.countries ?? []),
      working_hours: null,
      daily_cap: null,
      total_cap: null,
      integration: JSON.stringify({
        method: 'POST',
        url: 'http://127.0.0.1:9/leads',
        headers: {},
        body_template: { email: '{{lead.email}}' },
        success_path: 'success',
        lead_id_path: 'id',
        autologin_path: 'url',
        timeout_ms: 5000,
      }),
      postback_token_id: `pb${next()}`.padEnd(12, '0').slice(0, 12),
      postback_token_hash: hashSecret(next()),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export async function insertTrafficProvider(db: DB, over: Partial<{ name: string }> = {}) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('traffic_providers')
    .values({
      id,
      name: over.name ?? `Provider ${next()}`,
      status: 'active',
      token_id: `tp${next()}`.padEnd(12, '0').slice(0, 12),
      token_hash: hashSecret(next()),
      allowed_ips: '[]',
      duplicate_policy: JSON.stringify({ fields: ['email'], window_hours: 720, scope: 'provider' }),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export async function insertFlow(db: DB, partnerIds: string[] = [], over: Partial<{ name: string }> = {}) {
  const id = newId();
  const now = nowIso();
  await db.insertInto('flows').values({ id, name: over.name ?? `Flow ${next()}`, status: 'active', max_attempts: 3, created_at: now, updated_at: now, archived_at: null }).execute();
  for (const [i, partner_id] of partnerIds.entries()) {
    await db
      .insertInto('flow_targets')
      .values({ id: newId(), flow_id: id, partner_id, position: i, priority: i + 1, weight: 100, daily_cap: null, countries: '[]', schedule: null })
      .execute();
  }
  return id;
}

export async function insertCampaign(db: DB, traffic_provider_id: string, flow_id: string | null, over: Partial<{ name: string }> = {}) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('campaigns')
    .values({
      id,
      name: over.name ?? `Campaign ${next()}`,
      status: 'active',
      traffic_provider_id,
      flow_id,
      countries: '[]',
      payout: JSON.stringify({ model: 'cpl', amount_cents: 1000, currency: 'USD' }),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export type LeadInput = Partial<Insertable<LeadsTable>> & { traffic_provider_id: string };

export function leadRow(over: LeadInput): Insertable<LeadsTable> {
  const k = next();
  const created_at = over.created_at ?? nowIso();
  return {
    id: newId(),
    created_at,
    first_name: 'Ada',
    last_name: `Lovelace${k}`,
    email: `lead${k}@example.test`,
    phone: `+4915${k.padStart(9, '0').slice(-9)}`,
    country: 'DE',
    ip: '203.0.113.7',
    language: null,
    funnel: null,
    sub_id1: null,
    sub_id2: null,
    sub_id3: null,
    sub_id4: null,
    sub_id5: null,
    campaign_id: null,
    flow_id: null,
    partner_id: null,
    status: 'new',
    reason: null,
    partner_lead_id: null,
    sale_status: null,
    autologin_url: null,
    delivered_at: null,
    ftd_at: null,
    status_updated_at: created_at,
    cost_cents: 0,
    revenue_cents: 0,
    ...over,
  };
}

/** Inserts leads (in chunks) and returns their ids in order. */
export async function insertLeads(db: DB, leads: LeadInput[]): Promise<string[]> {
  const rows = leads.map(leadRow);
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('leads').values(rows.slice(i, i + 200)).execute();
  return rows.map((r) => r.id);
}

export async function insertAttempt(db: DB, a: Partial<Insertable<LeadAttemptsTable>> & { lead_id: string; partner_id: string; attempt_no: number }) {
  const id = newId();
  await db
    .insertInto('lead_attempts')
    .values({ id, requested_at: nowIso(), duration_ms: 120, http_status: 200, outcome: 'accepted', reason: null, response_excerpt: '{"success":true}', ...a })
    .execute();
  return id;
}
