// Caps hold across server processes: two servers share one PostgreSQL database and take 50
// concurrent leads for a partner with a daily cap of 10. Exactly 10 are delivered, whichever
// process took them; the rest are rejected saying the cap is full. The same for a flow target's
// daily caps per country.
import assert from 'node:assert/strict';
import { describe, type TestContext } from 'node:test';
import { POSTGRES_URL, postgresOnly } from './helpers.js';
import { accepting, defaultIntegration, startPartner } from './partner-server.js';
import { serversOnOnePostgres } from './processes.js';

const LEADS = 50;
const CAP = 10;

/** Two server processes on one fresh PostgreSQL database, a partner answering in 20 ms, the owner's client and one client per process. */
async function twoServers(t: TestContext) {
  const partner = await startPartner(t, accepting(20));
  const { admin: api, clients } = await serversOnOnePostgres(t, POSTGRES_URL, 2);
  return { partner, api, clients };
}

describe('caps across two server processes [postgres]', () => {
  postgresOnly(`50 concurrent leads, 2 processes, daily cap ${CAP}: exactly ${CAP} delivered`, async (t) => {
    const { partner, api, clients } = await twoServers(t);
    const p = await api.create('/api/partners', {
      name: 'Capped',
      daily_cap: CAP,
      integration: defaultIntegration(partner.url),
    });
    const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate' });
    await api.create('/api/campaigns', {
      name: 'Campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });

    const answers = await Promise.all(
      Array.from({ length: LEADS }, (_, i) =>
        clients[i % 2].send(
          'POST',
          '/api/intake/leads',
          {
            first_name: 'Cap',
            last_name: `Test${i}`,
            email: `cap.${i}@example.com`,
            phone: `+4915113${String(i).padStart(6, '0')}`,
            country: 'DE',
            ip: '198.51.100.2',
          },
          provider.token,
        ),
      ),
    );
    for (const res of answers) assert.equal(res.status, 201, res.text);
    const statuses = answers.map((r) => r.json().status as string);
    const delivered = answers.filter((r) => r.json().status === 'delivered');
    assert.equal(delivered.length, CAP, `statuses: ${JSON.stringify(statuses)}`);
    assert.equal(statuses.filter((s) => s === 'rejected').length, LEADS - CAP);
    assert.equal(partner.received.length, CAP, 'the partner was called only for the leads within the cap');

    // Both processes delivered some (the cap is shared, not per process)…
    const byProcess = [0, 1].map(
      (k) => answers.filter((r, i) => i % 2 === k && r.json().status === 'delivered').length,
    );
    t.diagnostic(`delivered per process: ${byProcess.join(' + ')}`);
    // …and a rejected lead names the cap as its reason.
    const rejectedId = answers.find((r) => r.json().status === 'rejected')!.json().id;
    const lead = (await api.send('GET', `/api/leads/${rejectedId}`)).json();
    assert.match(lead.reason, /cap/i);
  });

  postgresOnly(
    '40 concurrent leads, 2 processes, daily caps of 5 DE and 3 AT on one flow target: exactly 5 and 3 delivered',
    async (t) => {
      const { partner, api, clients } = await twoServers(t);
      const p = await api.create('/api/partners', { name: 'Broker', integration: defaultIntegration(partner.url) });
      const flow = await api.create('/api/flows', {
        name: 'Main',
        targets: [{ partner_id: p.id, priority: 1, country_caps: { DE: 5, AT: 3 } }],
      });
      const provider = await api.create('/api/traffic-providers', { name: 'Affiliate' });
      await api.create('/api/campaigns', {
        name: 'Campaign',
        traffic_provider_id: provider.id,
        flow_id: flow.id,
        payout: { model: 'cpl', amount: 10 },
      });

      const countryOf = (i: number) => (i % 4 < 2 ? 'DE' : 'AT'); // each process gets both countries
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          clients[i % 2].send(
            'POST',
            '/api/intake/leads',
            {
              first_name: 'Cap',
              last_name: `Country${i}`,
              email: `country.${i}@example.com`,
              phone: `+4915114${String(i).padStart(6, '0')}`,
              country: countryOf(i),
              ip: '198.51.100.2',
            },
            provider.token,
          ),
        ),
      );
      for (const res of answers) assert.equal(res.status, 201, res.text);
      const delivered = (country: string) =>
        answers.filter((r, i) => countryOf(i) === country && r.json().status === 'delivered').length;
      assert.deepEqual([delivered('DE'), delivered('AT')], [5, 3]);
      assert.equal(partner.received.length, 8, 'the partner was called only for the leads within the caps');
    },
  );
});
