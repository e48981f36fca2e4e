// Durability: a server killed with SIGKILL in the middle of intake load loses no lead. After a
// restart on the same database, every lead that got a 201 is there, and the recovery sweep
// leaves none `pending` (each is delivered, resumed, or failed with a reason).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENGINES, POSTGRES_URL } from './helpers.js';
import { accepting, defaultIntegration, startPartner } from './partner-server.js';
import { ADMIN, freshPostgresDatabase, ServerClient, spawnServer, waitUntilUp, type Child } from './processes.js';

const WORKERS = 24;
// The kill comes once this many leads were answered and at least LOAD_MS has passed (a slow,
// busy machine takes longer to get there; a fixed sleep made the test depend on its speed).
const MIN_ACCEPTED = 20;
const LOAD_MS = 1500;
const LOAD_LIMIT_MS = 30_000;
const PARTNER_DELAY_MS = 40; // so that many leads are mid-delivery when the process dies
const RECOVERY_DEADLINE_MS = 60_000;

const adminEnv = { LEADGATE_ADMIN_EMAIL: ADMIN.email, LEADGATE_ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'warn' };

for (const engine of ENGINES) {
  describe(`intake under SIGKILL [${engine}]`, () => {
    test('every lead answered 201 survives the kill, and none is left pending after restart', async (t) => {
      const children: Child[] = [];
      const env: Record<string, string> = { ...adminEnv, DELIVERY_RECOVERY_INTERVAL_MS: '250' };
      if (engine === 'postgres') env.DATABASE_URL = await freshPostgresDatabase(t, POSTGRES_URL, children);
      const partner = await startPartner(t, accepting(PARTNER_DELAY_MS));

      const first = await spawnServer(t, env);
      children.push(first);
      await waitUntilUp(first);
      const api = await new ServerClient(first.port).login();
      t.after(() => api.close());
      const p = await api.create('/api/partners', {
        name: 'Broker',
        integration: defaultIntegration(partner.url, { timeout_ms: 1000 }),
      });
      const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
      const provider = await api.create('/api/traffic-providers', {
        name: 'Affiliate',
        duplicate_policy: { fields: [], window_hours: 0, scope: 'provider' },
      });
      await api.create('/api/campaigns', {
        name: 'Campaign',
        traffic_provider_id: provider.id,
        flow_id: flow.id,
        payout: { model: 'cpl', amount: 10 },
      });

      // Load: WORKERS clients posting leads back to back; the server dies under them.
      const accepted = new Map<string, string>(); // lead id → status answered
      let serial = 0;
      let stop = false;
      const worker = async () => {
        const client = new ServerClient(first.port);
        try {
          while (!stop) {
            const n = ++serial;
            const res = await client
              .send(
                'POST',
                '/api/intake/leads',
                {
                  first_name: 'Kill',
                  last_name: `Test${n}`,
                  email: `kill.${n}@example.com`,
                  phone: `+4915112${String(n).padStart(6, '0')}`,
                  country: 'DE',
                  ip: '198.51.100.1',
                },
                provider.token,
              )
              .catch(() => null); // the connection dies with the server
            if (!res) return;
            assert.equal(res.status, 201, res.text);
            accepted.set(res.json().id, res.json().status);
          }
        } finally {
          client.close();
        }
      };
      const load = Array.from({ length: WORKERS }, worker);
      const loadStart = Date.now();
      while (
        (accepted.size < MIN_ACCEPTED || Date.now() - loadStart < LOAD_MS) &&
        Date.now() - loadStart < LOAD_LIMIT_MS
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      first.proc.kill('SIGKILL');
      stop = true;
      await Promise.all(load);
      assert.deepEqual((await first.exited).signal, 'SIGKILL');
      assert.ok(
        accepted.size >= MIN_ACCEPTED,
        `enough leads were accepted before the kill (${accepted.size} in ${LOAD_LIMIT_MS} ms)`,
      );

      // Restart on the same database (SQLite: same DATA_DIR).
      const second = await spawnServer(t, env, { dataDir: first.dataDir });
      children.push(second);
      await waitUntilUp(second);
      const api2 = await new ServerClient(second.port).login();
      t.after(() => api2.close());

      const deadline = Date.now() + RECOVERY_DEADLINE_MS;
      let pending = -1;
      while (Date.now() < deadline) {
        const res = await api2.send('GET', '/api/leads/search?status=pending&limit=1');
        assert.equal(res.status, 200, res.text);
        pending = res.json().data.length;
        if (pending === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(pending, 0, `leads still pending ${RECOVERY_DEADLINE_MS} ms after the restart`);

      // Every 201 is in the database, in a final state; an answered `delivered` stayed delivered.
      const finals = new Map<string, number>();
      for (const [id, answered] of accepted) {
        const res = await api2.send('GET', `/api/leads/${id}`);
        assert.equal(res.status, 200, `lead ${id} answered 201 (${answered}) is missing after the kill`);
        const lead = res.json();
        assert.ok(['delivered', 'rejected', 'failed'].includes(lead.status), `lead ${id} ended ${lead.status}`);
        if (answered === 'delivered') assert.equal(lead.status, 'delivered');
        if (lead.status === 'failed') assert.ok(lead.reason, 'a failed lead says why');
        finals.set(lead.status, (finals.get(lead.status) ?? 0) + 1);
      }
      // The partner was never sent the same lead twice (an interrupted call is not retried blindly).
      const sent = partner.received.map((r) => r.json?.clickId);
      assert.equal(new Set(sent).size, sent.length, 'a lead was sent to the partner twice');
      t.diagnostic(
        `${accepted.size} leads answered 201 before the kill; after restart: ${JSON.stringify(Object.fromEntries(finals))}`,
      );
    });
  });
}
