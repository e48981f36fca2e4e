// Velocity counts hold across server processes: two servers share one PostgreSQL database and
// take 30 concurrent leads from one IP for a provider that flags more than 10 earlier leads from
// one IP in an hour. Exactly the 10 first are unflagged, whichever process took them.
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { POSTGRES_URL, postgresOnly } from './helpers.js';
import { accepting, defaultIntegration, startPartner } from './partner-server.js';
import { serversOnOnePostgres } from './processes.js';

const LEADS = 30;
const LIMIT = 10;

describe('velocity across two server processes [postgres]', () => {
  postgresOnly(
    `${LEADS} concurrent leads from one IP, 2 processes, limit ${LIMIT}: exactly ${LEADS - LIMIT} flagged`,
    async (t) => {
      const partner = await startPartner(t, accepting(5));
      const { admin: api, clients } = await serversOnOnePostgres(t, POSTGRES_URL, 2);

      const p = await api.create('/api/partners', { name: 'Buyer', integration: defaultIntegration(partner.url) });
      const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
      const provider = await api.create('/api/traffic-providers', {
        name: 'Affiliate',
        velocity: { window_minutes: 60, ip: LIMIT, phone: null, email_domain: null },
      });
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
              first_name: 'Velo',
              last_name: `City${i}`,
              email: `velo.${i}@example.com`,
              phone: `+4915114${String(i).padStart(6, '0')}`,
              country: 'DE',
              ip: '198.51.100.9',
            },
            provider.token,
          ),
        ),
      );
      for (const res of answers) assert.equal(res.status, 201, res.text);
      const leads = await Promise.all(
        answers.map(async (r) => (await api.send('GET', `/api/leads/${r.json().id}`)).json()),
      );
      const flagged = leads.filter((l) => l.flags.includes('velocity_ip'));
      assert.equal(flagged.length, LEADS - LIMIT, `flags: ${JSON.stringify(leads.map((l) => l.flags))}`);
      // The unflagged ones are the first ten to arrive.
      const byTime = [...leads].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      assert.deepEqual(
        byTime.slice(0, LIMIT).map((l) => l.flags.includes('velocity_ip')),
        Array(LIMIT).fill(false),
      );
      t.diagnostic(
        `flagged per process: ${[0, 1].map((k) => leads.filter((l, i) => i % 2 === k && l.flags.includes('velocity_ip')).length).join(' + ')}`,
      );
    },
  );
});
