// A small distribution setup made through the API: partners (each backed by a real loopback
// HTTP server), one flow over them, a traffic provider with its intake token, and a campaign.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { insertLeads, type LeadInput } from './fixtures.js';
import { openDatabase } from '../src/server/db/database.js';
import { createPartnerClient } from '../src/server/distribution/partner-client.js';
import { DeliveryRunner } from '../src/server/distribution/runner.js';
import { call, type Engine, type TestApp } from './helpers.js';
import {
  accepting,
  defaultIntegration,
  startPartner,
  type PartnerHandler,
  type TestPartner,
} from './partner-server.js';

export interface WorldPartner {
  /** What the loopback partner does (default: accepting()). */
  handler?: PartnerHandler;
  /** Use this URL instead of starting a server (e.g. downUrl()). */
  url?: string;
  /** Extra partner fields: countries, working_hours, daily_cap, total_cap, status, name. */
  fields?: Record<string, unknown>;
  /** Extra integration fields (timeout_ms, paths…). */
  integration?: Record<string, unknown>;
  /** The flow target for this partner: priority (default: position + 1), weight, daily_cap, countries, schedule. */
  target?: Record<string, unknown>;
}

export interface World {
  partners: { id: string; name: string; server: TestPartner | null; postbackToken: string }[];
  flowId: string;
  providerId: string;
  /** The traffic provider's intake token (lgt_…). */
  token: string;
  campaignId: string;
}

let n = 0;

async function created(res: { statusCode: number; body: string; json(): any }, what: string) {
  assert.equal(res.statusCode, 201, `create ${what}: ${res.body}`);
  return res.json();
}

export async function makeWorld(
  t: TestContext,
  ta: TestApp,
  partners: WorldPartner[],
  opts: { maxAttempts?: number; provider?: Record<string, unknown>; campaign?: Record<string, unknown> } = {},
): Promise<World> {
  const out: World['partners'] = [];
  for (const p of partners) {
    const server = p.url ? null : await startPartner(t, p.handler ?? accepting());
    const name = `Partner ${++n}`;
    const body = await created(
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/partners',
        payload: { name, ...p.fields, integration: defaultIntegration(p.url ?? server!.url, p.integration) },
      }),
      'partner',
    );
    out.push({ id: body.id, name: body.name, server, postbackToken: body.postback_token });
  }
  const flow = await created(
    await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/flows',
      payload: {
        name: `Flow ${++n}`,
        max_attempts: opts.maxAttempts ?? 3,
        targets: out.map((p, i) => ({ partner_id: p.id, priority: i + 1, ...partners[i].target })),
      },
    }),
    'flow',
  );
  const provider = await created(
    await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/traffic-providers',
      payload: { name: `Provider ${++n}`, ...opts.provider },
    }),
    'traffic provider',
  );
  const campaign = await created(
    await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/campaigns',
      payload: {
        name: `Campaign ${++n}`,
        traffic_provider_id: provider.id,
        flow_id: flow.id,
        payout: { model: 'cpl', amount: 10 },
        ...opts.campaign,
      },
    }),
    'campaign',
  );
  return { partners: out, flowId: flow.id, providerId: provider.id, token: provider.token, campaignId: campaign.id };
}

let leadSerial = 0;

/** A valid intake body; each call gets a fresh email and phone (so no duplicate unless asked). */
export function sampleLead(over: Record<string, unknown> = {}) {
  const k = ++leadSerial;
  return {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `ada.${process.pid}.${k}@example.com`,
    // German mobile numbers: +49 151 + 8 digits
    phone: `+49151${String(10_000_000 + ((process.pid * 7919 + k) % 89_999_999)).padStart(8, '0')}`,
    country: 'DE',
    ip: '203.0.113.7',
    ...over,
  };
}

/** POST /api/intake/leads with the provider's token. */
export function postLead(
  ta: TestApp,
  token: string,
  lead: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return ta.app.inject({
    method: 'POST',
    url: '/api/intake/leads',
    headers: { authorization: `Bearer ${token}`, ...headers },
    payload: lead,
  });
}

/**
 * A `pending` lead of the world's campaign written straight into the database, leased to this
 * process for a minute as intake leases it: ready for app.delivery.run(id). Returns its id.
 */
export async function insertPendingLead(ta: TestApp, w: World, over: Partial<LeadInput> = {}): Promise<string> {
  const [id] = await insertLeads(ta.db, [
    {
      traffic_provider_id: w.providerId,
      campaign_id: w.campaignId,
      flow_id: w.flowId,
      status: 'pending',
      lease_until: new Date(Date.now() + 60_000).toISOString(),
      ...over,
    },
  ]);
  return id;
}

/**
 * A delivery runner as a second server process would have it: on PostgreSQL its own pool and
 * HTTP client (SQLite is one process by nature: the app's own runner).
 */
export async function secondRunner(t: TestContext, ta: TestApp, engine: Engine): Promise<DeliveryRunner> {
  if (engine !== 'postgres') return ta.app.delivery;
  const db = openDatabase(ta.config.database);
  const other = new DeliveryRunner({
    db,
    log: ta.app.log,
    client: createPartnerClient({ allowedNetworks: ta.config.partnerAllowedNetworks }),
  });
  t.after(async () => {
    await other.close();
    await other.deps.client.close();
    await db.destroy();
  });
  return other;
}

/** The cap counters as "scope period" → used. */
export const capCounters = async (ta: TestApp) =>
  Object.fromEntries(
    (await ta.db.selectFrom('cap_counters').select(['scope', 'period', 'used']).execute()).map((r) => [
      `${r.scope} ${r.period}`,
      Number(r.used),
    ]),
  );
