// The outbox across real server processes: a process killed (SIGKILL) while a webhook call is
// in flight loses no event (another process sends it again once its lease runs out, with the
// same webhook-id), and two processes on one PostgreSQL never send the same event at once,
// keeping each lead's events in order.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { ENGINES, POSTGRES_URL, postgresOnly, until } from './helpers.js';
import { accepting, defaultIntegration, json, startPartner, type ReceivedRequest } from './partner-server.js';
import { ADMIN, freshPostgresDatabase, ServerClient, spawnServer, waitUntilUp, type Child } from './processes.js';
import { verifySignature } from './webhook-receiver.js';

const baseEnv = {
  LEADGATE_ADMIN_EMAIL: ADMIN.email,
  LEADGATE_ADMIN_PASSWORD: ADMIN.password,
  LOG_LEVEL: 'warn',
  EVENT_DISPATCH_INTERVAL_MS: '100',
};

/** A partner, a flow, a provider and its campaign, made through the API; the provider's intake token. */
async function setUp(api: ServerClient, partnerUrl: string): Promise<string> {
  const p = await api.create('/api/partners', { name: 'Broker', integration: defaultIntegration(partnerUrl) });
  const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
  const provider = await api.create('/api/traffic-providers', { name: 'Affiliate' });
  await api.create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  return provider.token;
}

const lead = (n: number) => ({
  first_name: 'Eve',
  last_name: `Nt${n}`,
  email: `evt.${process.pid}.${n}@example.com`,
  phone: `+4915113${String(n).padStart(6, '0')}`,
  country: 'DE',
  ip: '198.51.100.2',
});

for (const engine of ENGINES) {
  describe(`event dispatch under SIGKILL [${engine}]`, () => {
    test('the event whose call was in flight is sent again by the next process, with the same webhook-id', async (t) => {
      const children: Child[] = [];
      const env: Record<string, string> = { ...baseEnv };
      if (engine === 'postgres') env.DATABASE_URL = await freshPostgresDatabase(t, POSTGRES_URL, children);
      const partner = await startPartner(t, accepting());
      // The first call is held unanswered (the process dies waiting); later ones get 200.
      const held: ServerResponse[] = [];
      const receiver = await startPartner(t, (_req, res) => {
        if (receiver.received.length === 1) held.push(res);
        else json(res, 200, {});
      });
      t.after(() => held.forEach((r) => r.destroy()));

      const first = await spawnServer(t, env);
      children.push(first);
      await waitUntilUp(first);
      const api = await new ServerClient(first.port).login();
      t.after(() => api.close());
      const token = await setUp(api, partner.url);
      const hook = await api.create('/api/webhooks', {
        name: 'Sink',
        url: receiver.url,
        event_types: ['lead.received'],
      });
      assert.equal((await api.send('POST', '/api/intake/leads', lead(1), token)).status, 201);
      await until(() => receiver.received.length === 1, 'the first call to arrive');
      first.proc.kill('SIGKILL');
      await first.exited;

      const second = await spawnServer(t, env, { dataDir: first.dataDir });
      children.push(second);
      await waitUntilUp(second);
      // The lease (15 s) runs out, then the second process sends it again.
      await until(() => receiver.received.length >= 2, 'the event to be sent again', 40_000);
      const [a, b] = receiver.received;
      assert.equal(a.headers['webhook-id'], b.headers['webhook-id']);
      assert.equal(a.body, b.body);
      assert.ok(verifySignature(hook.secret, b.headers, b.body));
      const api2 = await new ServerClient(second.port).login();
      t.after(() => api2.close());
      const log = await until(async () => {
        const l = (await api2.send('GET', `/api/webhooks/${hook.id}/deliveries`)).json();
        return l.data[0]?.state === 'delivered' && l;
      }, 'the delivery to be recorded as delivered');
      assert.equal(log.data.length, 1);
      assert.equal(receiver.received.length, 2, 'sent twice in all: at least once, not more than needed');
    });
  });
}

describe('event dispatch from two processes [postgres]', () => {
  postgresOnly('never the same event at once, each sent once, every lead in order', async (t) => {
    const children: Child[] = [];
    const env: Record<string, string> = {
      ...baseEnv,
      EVENT_DISPATCH_INTERVAL_MS: '20',
      DATABASE_URL: await freshPostgresDatabase(t, POSTGRES_URL, children),
    };
    const partner = await startPartner(t, accepting());
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const arrivals: ReceivedRequest[] = [];
    const receiver = await startPartner(t, async (req, res) => {
      const id = String(req.headers['webhook-id']);
      if (inFlight.has(id)) overlaps.push(id);
      inFlight.add(id);
      arrivals.push(req);
      await new Promise((r) => setTimeout(r, 30));
      inFlight.delete(id);
      json(res, 200, {});
    });
    const servers: Child[] = [];
    for (let i = 0; i < 2; i++) {
      const c = await spawnServer(t, env);
      children.push(c);
      servers.push(c);
      await waitUntilUp(c);
    }
    const api = await new ServerClient(servers[0].port).login();
    t.after(() => api.close());
    const token = await setUp(api, partner.url);
    await api.create('/api/webhooks', {
      name: 'Sink',
      url: receiver.url,
      event_types: ['lead.received', 'lead.delivered'],
    });
    const LEADS = 30;
    const ids: string[] = [];
    for (let n = 0; n < LEADS; n++) {
      const res = await api.send('POST', '/api/intake/leads', lead(100 + n), token);
      assert.equal(res.status, 201, res.text);
      ids.push(res.json().id);
    }
    await until(() => arrivals.length >= 2 * LEADS, `${2 * LEADS} events to arrive`, 60_000);
    await new Promise((r) => setTimeout(r, 300)); // nothing more comes
    assert.deepEqual(overlaps, [], 'no event was being sent by two processes at once');
    const byId = new Map<string, number>();
    for (const r of arrivals)
      byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    assert.equal(byId.size, 2 * LEADS);
    assert.ok(
      [...byId.values()].every((n) => n === 1),
      'each event sent once',
    );
    for (const id of ids) {
      const types = arrivals.filter((r) => r.json.data.lead_id === id).map((r) => r.json.type);
      assert.deepEqual(types, ['lead.received', 'lead.delivered'], `lead ${id} in order`);
    }
  });
});
