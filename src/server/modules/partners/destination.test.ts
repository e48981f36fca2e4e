import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { buildTestApp, call, expectProblem, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { startTrap } from '../../../../test/loopback-trap.js';
import { accepting, defaultIntegration, startPartner } from '../../../../test/partner-server.js';
import { integrationFromStore } from '../../distribution/integrations/index.js';

// Where a partner's integration may send leads and secrets, through the API:
// - contract rule 14: loopback, private, link-local… destinations are refused when saved (written
//   literally) and when a delivery or a test connects (after resolution), unless inside
//   PARTNER_ALLOWED_NETWORKS; the partner server must then receive nothing;
// - contract rule 15: a masked header value stands for the stored secret only while the URL's
//   scheme, host and port are unchanged.
// Tests proving a refusal set PARTNER_ALLOWED_NETWORKS to '' (buildTestApp allows loopback).

const GUARDED = { env: { PARTNER_ALLOWED_NETWORKS: '' } };
const SECRET = 'partner-secret-key-123456';
const NOT_CALLED =
  'Leadgate does not call loopback, private, link-local or other non-public addresses unless PARTNER_ALLOWED_NETWORKS includes them';

const create = (ta: TestApp, url: string, extra: Record<string, unknown> = {}) =>
  call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/partners',
    payload: { name: 'Broker', integration: defaultIntegration(url, extra) },
  });
const patch = (ta: TestApp, id: string, payload: object) =>
  call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/partners/${id}`, payload });
const testSend = (ta: TestApp, id: string, payload: object = {}) =>
  call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/partners/${id}/test`, payload });

async function created(ta: TestApp, url: string, extra: Record<string, unknown> = {}) {
  const res = await create(ta, url, extra);
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; integration: { headers: Record<string, string> } };
}

const storedIntegration = async (ta: TestApp, id: string) =>
  integrationFromStore(
    (await ta.db.selectFrom('partners').select('integration').where('id', '=', id).executeTakeFirstOrThrow())
      .integration,
  );

/**
 * Points a saved partner at `url` behind the API's back: a partner saved while
 * PARTNER_ALLOWED_NETWORKS allowed it, or whose host name resolves somewhere else now.
 */
async function repoint(ta: TestApp, id: string, url: string) {
  const integration = { ...(await storedIntegration(ta, id)), url };
  await ta.db
    .updateTable('partners')
    .set({ integration: JSON.stringify(integration) })
    .where('id', '=', id)
    .execute();
}

forEachDatabase('Partner destinations and write-only secrets', (engine) => {
  test('saving a URL whose host is a refused address written literally is a 400 naming integration.url (POST and PATCH)', async (t) => {
    const ta = await buildTestApp(t, engine, GUARDED);
    const refused: [string, string][] = [
      ['http://localhost:8080/leads', 'points to localhost, a loopback address'],
      ['http://[::1]:8080/leads', 'points to ::1, a loopback address'],
      ['http://2130706433:8080/leads', 'points to 127.0.0.1, a loopback address'],
      ['http://0x7f000001/leads', 'points to 127.0.0.1, a loopback address'],
      ['http://127.1/leads', 'points to 127.0.0.1, a loopback address'],
      ['http://0177.0.0.1/leads', 'points to 127.0.0.1, a loopback address'],
      ['http://0.0.0.0:3000/leads', 'points to 0.0.0.0, an unspecified address'],
      ['http://[::ffff:127.0.0.1]/leads', 'points to 127.0.0.1, a loopback address'],
      ['http://169.254.169.254/latest/meta-data/', 'points to 169.254.169.254, a link-local address'],
      ['https://10.1.2.3/leads', 'points to 10.1.2.3, a private address'],
      ['https://100.64.0.7/leads', 'points to 100.64.0.7, a carrier-grade NAT (shared) address'],
      ['https://[fd00::7]/leads', 'points to fd00::7, a private (unique local) address'],
    ];
    for (const [url, message] of refused) {
      const problem = expectProblem(await create(ta, url), 400, 'validation_failed');
      assert.deepEqual(problem.errors, [{ field: 'integration.url', message: `${message}: ${NOT_CALLED}` }], url);
    }
    assert.equal((await ta.db.selectFrom('partners').select('id').execute()).length, 0, 'nothing saved');

    // A host name is not resolved when saving (the guard checks it at connect time); a public address is fine.
    const partner = await created(ta, 'https://broker.example/api/leads');
    assert.equal((await create(ta, 'http://93.184.216.34/leads')).statusCode, 201);
    const before = await storedIntegration(ta, partner.id);
    const problem = expectProblem(
      await patch(ta, partner.id, {
        integration: {
          ...defaultIntegration('http://0xa9fea9fe/latest/meta-data/'),
          headers: { 'X-Api-Key': 'a-new-key-0000' },
        },
      }),
      400,
      'validation_failed',
    );
    assert.deepEqual(problem.errors, [
      { field: 'integration.url', message: `points to 169.254.169.254, a link-local address: ${NOT_CALLED}` },
    ]);
    assert.deepEqual(await storedIntegration(ta, partner.id), before);
  });

  test("a lead's data never picks the host: placeholders in the URL's host are a 400, in the path and query they are fine", async (t) => {
    const ta = await buildTestApp(t, engine, GUARDED);
    for (const url of [
      'https://{{lead.sub_id1}}/leads',
      'https://{{lead.country}}.broker.example/leads',
      'https://api.{{lead.funnel}}.example/x',
    ]) {
      const problem = expectProblem(await create(ta, url), 400, 'validation_failed');
      assert.deepEqual(
        problem.errors,
        [{ field: 'integration.url', message: 'placeholders may fill the path and query only, not the host' }],
        url,
      );
    }
    assert.equal(
      (await create(ta, 'https://broker.example/{{lead.country}}/leads?src={{lead.sub_id1}}')).statusCode,
      201,
    );
  });

  test('delivery: a refused destination is not called, each attempt says why, and the waterfall moves on', async (t) => {
    const ta = await buildTestApp(t, engine, GUARDED);
    const trap = await startTrap(t);
    const hosts = ['localhost', '[::1]', '2130706433', '0x7f000001', '127.1', '0.0.0.0', '[::ffff:127.0.0.1]'];
    // Saved under host names (not resolved when saving), then pointed at the loopback spellings.
    const w = await makeWorld(
      t,
      ta,
      hosts.map((_, i) => ({ url: `https://broker-${i}.example/leads` })),
      { maxAttempts: hosts.length },
    );
    for (const [i, host] of hosts.entries()) await repoint(ta, w.partners[i].id, trap.url(host));

    const res = await postLead(ta, w.token, sampleLead());
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'rejected');
    const attempts = await ta.db
      .selectFrom('lead_attempts')
      .select(['partner_id', 'outcome', 'reason', 'http_status'])
      .where('lead_id', '=', res.json().id)
      .orderBy('attempt_no')
      .execute();
    assert.deepEqual(
      attempts.map((a) => a.partner_id),
      w.partners.map((p) => p.id),
      'every partner tried, in order',
    );
    assert.ok(attempts.every((a) => a.outcome === 'error' && a.http_status === null));
    assert.match(
      attempts[0].reason!,
      /^destination localhost resolves to (127\.0\.0\.1|::1), which is loopback: not allowed$/,
    );
    assert.deepEqual(
      attempts.slice(1).map((a) => a.reason),
      [
        'destination ::1 is loopback: not allowed',
        'destination 127.0.0.1 is loopback: not allowed',
        'destination 127.0.0.1 is loopback: not allowed',
        'destination 127.0.0.1 is loopback: not allowed',
        'destination 0.0.0.0 is unspecified: not allowed',
        'destination 127.0.0.1 is loopback: not allowed',
      ],
    );
    const lead = await ta.db
      .selectFrom('leads')
      .select('reason')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    assert.match(lead.reason!, /destination 0\.0\.0\.0 is unspecified: not allowed/);
    assert.equal(trap.received.length, 0, 'no partner server was called');
  });

  test('send test lead: a refused destination is not called; the answer is the usual result with the reason', async (t) => {
    const ta = await buildTestApp(t, engine, GUARDED);
    const trap = await startTrap(t);
    const partner = await created(ta, 'https://broker.example/leads');
    await repoint(ta, partner.id, trap.url('localhost'));

    const res = await testSend(ta, partner.id);
    assert.equal(res.statusCode, 200, res.body);
    const r = res.json();
    assert.equal(r.outcome, 'error');
    assert.match(r.reason, /^destination localhost resolves to (127\.0\.0\.1|::1), which is loopback: not allowed$/);
    assert.equal(r.response, null);
    assert.equal(r.request.url, trap.url('localhost'));
    assert.equal(r.request.headers['X-Api-Key'], '••••3456');

    // An unsaved integration with a literal refused address: refused as saving it would be.
    const draft = expectProblem(
      await testSend(ta, partner.id, { integration: { ...defaultIntegration(trap.url('127.1')), headers: {} } }),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      draft.errors!.map((e) => e.field),
      ['integration.url'],
    );
    assert.equal(trap.received.length, 0);
  });

  test('PARTNER_ALLOWED_NETWORKS: a destination inside it is saved and called; outside it is still refused', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { PARTNER_ALLOWED_NETWORKS: '127.0.0.1' } });
    const trap = await startTrap(t);
    for (const host of ['127.0.0.1', 'localhost', '2130706433']) {
      const partner = await created(ta, trap.url(host));
      const r = (await testSend(ta, partner.id)).json();
      assert.equal(r.outcome, 'accepted', `${host}: ${r.reason}`);
    }
    assert.equal(trap.received.length, 3);
    assert.equal(trap.received[0].headers['x-api-key'], SECRET);
    // ::1 is loopback too, but not inside 127.0.0.1/32.
    assert.deepEqual(
      expectProblem(await create(ta, trap.url('[::1]')), 400, 'validation_failed').errors!.map((e) => e.field),
      ['integration.url'],
    );
    assert.equal(trap.received.length, 3);
  });

  test('PATCH: a masked header value with a new scheme, host or port is refused per header; the stored integration is unchanged', async (t) => {
    const ta = await buildTestApp(t, engine);
    const headers = { 'X-Api-Key': 'partner-secret-key-9876', Authorization: 'Bearer sk_live_abcdefgh12345678' };
    const partner = await created(ta, 'https://broker.example/api/leads', { headers });
    const shown = partner.integration.headers;
    assert.deepEqual(shown, { 'X-Api-Key': '••••9876', Authorization: '••••5678' });
    const before = await storedIntegration(ta, partner.id);

    for (const url of [
      'https://attacker.example/collect',
      'https://broker.example:8443/api/leads',
      'http://broker.example/api/leads',
      'https://broker.example.attacker.example/api/leads',
    ]) {
      const problem = expectProblem(
        await patch(ta, partner.id, { integration: { ...defaultIntegration(url), headers: shown } }),
        400,
        'validation_failed',
      );
      assert.deepEqual(
        problem.errors,
        [
          {
            field: 'integration.headers.X-Api-Key',
            message: 're-enter this secret: the destination changed (scheme, host or port)',
          },
          {
            field: 'integration.headers.Authorization',
            message: 're-enter this secret: the destination changed (scheme, host or port)',
          },
        ],
        url,
      );
      assert.deepEqual(await storedIntegration(ta, partner.id), before, url);
    }

    // The same origin (other path, other spelling of scheme, host and default port) keeps the secrets.
    const same = await patch(ta, partner.id, {
      integration: { ...defaultIntegration('HTTPS://Broker.Example:443/v2/leads'), headers: shown },
    });
    assert.equal(same.statusCode, 200, same.body);
    assert.deepEqual((await storedIntegration(ta, partner.id)).headers, headers);

    // A new destination with the secrets typed in again is fine; a new header's value may be anything.
    const moved = await patch(ta, partner.id, {
      integration: {
        ...defaultIntegration('https://new-broker.example/leads'),
        headers: { 'X-Api-Key': 'new-key-abcdef', 'X-Other': 'v' },
      },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual((await storedIntegration(ta, partner.id)).headers, {
      'X-Api-Key': 'new-key-abcdef',
      'X-Other': 'v',
    });
  });

  test('send test lead: a masked header value for another port is refused and that server receives nothing; the same origin gets the secret', async (t) => {
    const ta = await buildTestApp(t, engine);
    const saved = await startPartner(t, accepting());
    const other = await startPartner(t, accepting());
    const partner = await created(ta, saved.url);

    const refused = expectProblem(
      await testSend(ta, partner.id, {
        integration: { ...defaultIntegration(other.url), headers: { 'X-Api-Key': '••••3456' } },
      }),
      400,
      'validation_failed',
    );
    assert.deepEqual(refused.errors, [
      {
        field: 'integration.headers.X-Api-Key',
        message: 're-enter this secret: the destination changed (scheme, host or port)',
      },
    ]);
    assert.equal(other.received.length, 0);
    assert.equal(saved.received.length, 0);

    // Same scheme, host and port, another path: the mask stands for the stored secret.
    const ok = await testSend(ta, partner.id, {
      integration: {
        ...defaultIntegration(saved.url.replace('/leads', '/v2/leads')),
        headers: { 'X-Api-Key': '••••3456' },
      },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().outcome, 'accepted', ok.body);
    assert.equal(saved.received.length, 1);
    assert.equal(saved.received[0].url, '/v2/leads');
    assert.equal(saved.received[0].headers['x-api-key'], SECRET);
  });
});
