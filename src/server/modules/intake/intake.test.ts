import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeAllowList } from '../../auth/ip-allowlist.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  leadCount,
  newApiKey,
  until,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { gated, rejecting } from '../../../../test/partner-server.js';

const storedLead = (ta: TestApp, id: string) =>
  ta.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const fields = (res: Awaited<ReturnType<typeof postLead>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();
const withoutId = (res: Awaited<ReturnType<typeof postLead>>) => ({ ...(res.json() as object), id: null });
const messageOf = (res: Awaited<ReturnType<typeof postLead>>, field: string) =>
  res.json().errors.find((e: { field: string }) => e.field === field)?.message;

async function created(ta: TestApp, url: string, payload: object) {
  const res = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
const newProvider = (ta: TestApp, payload: object = {}) =>
  created(ta, '/api/traffic-providers', { name: 'Affiliate', ...payload });
const newCampaign = (ta: TestApp, traffic_provider_id: string, payload: object = {}) =>
  created(ta, '/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id,
    payout: { model: 'cpl', amount: 5 },
    ...payload,
  });

forEachDatabase('Lead intake', (engine) => {
  test("only an active provider's intake token from an allowed address gets in", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { allowed_ips: ['198.51.100.0/24'] } });
    const post = (authorization: string | undefined, remoteAddress = '198.51.100.7') =>
      ta.app.inject({
        method: 'POST',
        url: '/api/intake/leads',
        payload: sampleLead(),
        remoteAddress,
        headers: authorization ? { authorization } : {},
      });
    const key = await newApiKey(ta, ['leads:view']);
    // The token with its last character changed (to one it is not: a fixed 'x' was the token
    // itself once in 62 runs).
    const mistyped = w.token.slice(0, -1) + (w.token.endsWith('x') ? 'y' : 'x');

    for (const auth of [
      undefined,
      `Bearer ${ta.ownerToken}`,
      `Bearer ${key.secret}`,
      'Bearer lgt_abcdefghijklmnop',
      `Bearer ${mistyped}`,
      `Basic ${w.token}`,
    ]) {
      const res = await post(auth);
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
    assert.match(
      (await post(`Bearer ${ta.ownerToken}`)).json().detail,
      /intake token \(lgt_…\), not a session or API key/,
    );

    expectProblem(await post(`Bearer ${w.token}`, '203.0.113.9'), 403, 'ip_not_allowed');
    assert.equal((await post(`Bearer ${w.token}`)).statusCode, 201);
    // The account allow-list is for operators; a provider is judged by its own list only.
    await writeAllowList(ta.db, ['10.0.0.0/8']);
    assert.equal((await post(`Bearer ${w.token}`)).statusCode, 201);
    await writeAllowList(ta.db, []);

    const pause = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/traffic-providers/${w.providerId}`,
      payload: { status: 'paused' },
    });
    assert.equal(pause.statusCode, 200);
    expectProblem(await post(`Bearer ${w.token}`), 403, 'provider_paused');
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/traffic-providers/${w.providerId}`,
      payload: { status: 'active' },
    });

    const rotated = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${w.providerId}/rotate-token`,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    expectProblem(await post(`Bearer ${w.token}`), 401, 'unauthorized');
    assert.equal((await post(`Bearer ${rotated.json().token}`)).statusCode, 201);
    assert.equal(await leadCount(ta), 3, 'only the three accepted posts stored a lead');
  });

  test('every bad field is named in one 400, and nothing is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const bad = {
      first_name: '   ',
      email: 'not-an-email',
      phone: 'abc', // not judged: with an invalid country a national number cannot be read
      country: 'XX',
      ip: '300.1.1.1',
      language: 'x'.repeat(36),
      funnel: null,
      sub_id3: 5,
      sub_id4: 'y'.repeat(501),
      campaign_id: 'no-such-campaign',
      favourite_colour: 'blue',
    };
    const res = await postLead(ta, w.token, bad, { 'idempotency-key': 'has space' });
    assert.deepEqual(fields(res), [
      'campaign_id',
      'country',
      'email',
      'favourite_colour',
      'first_name',
      'idempotency-key',
      'ip',
      'language',
      'last_name',
      'sub_id3',
      'sub_id4',
    ]);
    assert.match(messageOf(res, 'campaign_id'), /not a campaign of this traffic provider/);
    assert.match(messageOf(res, 'favourite_colour'), /not a known field/);

    // A schema-valid body: the checks beyond the schema, each named.
    const semantic = await postLead(
      ta,
      w.token,
      sampleLead({ email: 'a@b', phone: '0151 123', country: 'de', ip: '1.2.3.04' }),
    );
    assert.deepEqual(fields(semantic), ['email', 'ip', 'phone']);
    assert.match(messageOf(semantic, 'phone'), /valid phone number for DE/);

    assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ country: 'uk' }))), ['country']);
    assert.match(messageOf(await postLead(ta, w.token, sampleLead({ country: 'UK' })), 'country'), /use GB/);
    for (const country of ['EU', 'XK', 'ZZ', 'D', 'DEU', '12'])
      assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ country }))), ['country'], country);
    // An international number is judged whatever the country; a national one needs a valid country.
    assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ country: 'XX', phone: '+49 151' }))), [
      'country',
      'phone',
    ]);
    assert.deepEqual(
      fields(await postLead(ta, w.token, sampleLead({ phone: '+1 201 555 0123 ext 5', country: 'US' }))),
      ['phone'],
    );
    for (const ip of ['fe80::1%eth0', '1.2.3', 'localhost', ''])
      assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ ip }))), ['ip'], ip);
    for (const email of [
      'a@@b.co',
      'a b@c.de',
      '.a@b.co',
      'a..b@c.de',
      'a@b.123',
      'a@-b.de',
      '@b.de',
      'x'.repeat(255),
    ]) {
      assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ email }))), ['email'], email);
    }
    for (const payload of ['[]', '"lead"', 'null', '42']) {
      const res = await call(ta.app, w.token, {
        method: 'POST',
        url: '/api/intake/leads',
        payload,
        headers: { 'content-type': 'application/json' },
      });
      assert.deepEqual(fields(res), ['body'], payload);
    }
    assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ first_name: 'a\u0000b' }))), ['first_name']);
    assert.deepEqual(fields(await postLead(ta, w.token, sampleLead(), { 'idempotency-key': 'k'.repeat(256) })), [
      'idempotency-key',
    ]);
    assert.equal(await leadCount(ta), 0);
    assert.equal(w.partners[0].server!.received.length, 0);
  });

  test('the stored lead is normalized: trimmed, email lower case, phone E.164 from national format, country upper case, IP canonical', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const res = await postLead(ta, w.token, {
      first_name: '  Ada ',
      last_name: ' Lovelace',
      email: '  Ada.Lovelace@Example.COM ',
      phone: '0151 2345 6789',
      country: 'de',
      ip: '::FFFF:203.0.113.9',
      language: ' de-AT ',
      funnel: '',
      sub_id1: ' click-1 ',
      sub_id5: null,
    });
    assert.equal(res.statusCode, 201, res.body);
    const row = await storedLead(ta, res.json().id);
    assert.deepEqual(
      {
        first_name: row.first_name,
        last_name: row.last_name,
        email: row.email,
        phone: row.phone,
        country: row.country,
        ip: row.ip,
      },
      {
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada.lovelace@example.com',
        phone: '+4915123456789',
        country: 'DE',
        ip: '203.0.113.9',
      },
    );
    assert.deepEqual([row.language, row.funnel, row.sub_id1, row.sub_id5], ['de-AT', null, 'click-1', null]);
    assert.deepEqual([row.traffic_provider_id, row.campaign_id, row.flow_id], [w.providerId, w.campaignId, w.flowId]);
    // The partner got the normalized lead.
    assert.equal(w.partners[0].server!.received[0].json.phone, '+4915123456789');

    const v6 = await postLead(
      ta,
      w.token,
      sampleLead({ ip: '2001:DB8:0:0:0:0:0:1', phone: '+1 (201) 555-0123', country: 'US' }),
    );
    assert.equal(v6.statusCode, 201, v6.body);
    const row6 = await storedLead(ta, v6.json().id);
    assert.deepEqual([row6.ip, row6.phone], ['2001:db8::1', '+12015550123']);
  });

  test("campaign: the one named (this provider's, not archived), or the provider's only active one; paused or other countries are rejected", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { campaign: { countries: ['DE', 'AT'] } });
    const other = await newProvider(ta);
    const foreign = await newCampaign(ta, other.id);

    // Another provider's campaign reads as unknown.
    const res = await postLead(ta, w.token, sampleLead({ campaign_id: foreign.id }));
    assert.deepEqual(fields(res), ['campaign_id']);

    const fr = await postLead(ta, w.token, sampleLead({ country: 'fr' }));
    assert.equal(fr.statusCode, 201, fr.body);
    assert.deepEqual(withoutId(fr), {
      id: null,
      status: 'rejected',
      autologin_url: null,
      reason: 'campaign does not accept FR leads',
    });
    const frRow = await storedLead(ta, fr.json().id);
    assert.deepEqual(
      [frRow.status, frRow.reason, frRow.campaign_id, frRow.partner_id, frRow.lease_until],
      ['rejected', 'campaign does not accept FR leads', w.campaignId, null, null],
    );

    // A second active campaign: campaign_id becomes required.
    const second = await newCampaign(ta, w.providerId, { flow_id: w.flowId });
    const ambiguous = await postLead(ta, w.token, sampleLead());
    assert.deepEqual(fields(ambiguous), ['campaign_id']);
    assert.equal(messageOf(ambiguous, 'campaign_id'), 'is required: this traffic provider has 2 active campaigns');
    assert.equal((await postLead(ta, w.token, sampleLead({ campaign_id: second.id }))).statusCode, 201);

    // Paused: the only active one is chosen; named, the paused one rejects its leads.
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/campaigns/${w.campaignId}`,
      payload: { status: 'paused' },
    });
    const chosen = await postLead(ta, w.token, sampleLead());
    assert.equal((await storedLead(ta, chosen.json().id)).campaign_id, second.id);
    const paused = await postLead(ta, w.token, sampleLead({ campaign_id: w.campaignId }));
    assert.deepEqual([paused.json().status, paused.json().reason], ['rejected', 'campaign is paused']);

    // Archived (deleted while leads refer to it): refused; no active one left: refused, saying so.
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/campaigns/${second.id}` })).statusCode,
      204,
    );
    assert.deepEqual(fields(await postLead(ta, w.token, sampleLead({ campaign_id: second.id }))), ['campaign_id']);
    const none = await postLead(ta, w.token, sampleLead());
    assert.equal(messageOf(none, 'campaign_id'), 'is required: this traffic provider has no active campaign');
    // The two rejected leads never reached a partner; the two routed ones did.
    assert.equal(w.partners[0].server!.received.length, 2);
  });

  test("delivered: the answer carries the partner's autologin URL; rejected: a reason that names no partner", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const lead = sampleLead();
    const res = await postLead(ta, w.token, lead);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), ['autologin_url', 'id', 'reason', 'status']);
    const sent = w.partners[0].server!.received;
    assert.equal(sent.length, 1);
    assert.equal(
      sent[0].json.clickId,
      res.json().id,
      'the lead was stored (its id made) before the partner was called',
    );
    assert.equal(res.json().status, 'delivered');
    assert.equal(res.json().reason, null);
    assert.match(res.json().autologin_url, /^https:\/\/broker\.example\/login\/P-\d+\?email=/);
    const row = await storedLead(ta, res.json().id);
    assert.deepEqual(
      [row.status, row.autologin_url, row.partner_id],
      ['delivered', res.json().autologin_url, w.partners[0].id],
    );

    const r = await makeWorld(t, ta, [
      { handler: rejecting(200, 'we do not buy from Affiliate X') },
      { handler: rejecting(500) },
    ]);
    const rejected = await postLead(ta, r.token, sampleLead());
    assert.equal(rejected.statusCode, 201, rejected.body);
    assert.deepEqual(withoutId(rejected), {
      id: null,
      status: 'rejected',
      autologin_url: null,
      reason: 'no buyer accepted the lead',
    });
    for (const p of r.partners)
      assert.ok(!rejected.body.includes(p.name) && !rejected.body.includes(p.id), 'the provider never learns who buys');
    assert.ok((await storedLead(ta, rejected.json().id)).reason, 'operators see the real reason');

    // Lead contacts and the token stay out of the logs.
    const logs = ta.logs.join('');
    for (const secret of [lead.email, lead.phone, w.token]) assert.ok(!logs.includes(secret), `logs contain ${secret}`);
  });

  test('a delivery slower than INTAKE_WAIT_MS is answered pending and goes on to delivered', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { INTAKE_WAIT_MS: '50' } });
    // The partner answers only when the test lets it: slower than INTAKE_WAIT_MS by construction.
    const partner = gated(t);
    const w = await makeWorld(t, ta, [{ handler: partner.handler }]);
    const res = await postLead(ta, w.token, sampleLead());
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      withoutId(res),
      { id: null, status: 'pending', autologin_url: null, reason: null },
      'answered before the partner did',
    );
    // Stored before the partner was called: pending, leased to this process, nothing earned or paid yet.
    const row = await storedLead(ta, res.json().id);
    assert.deepEqual(
      [row.status, row.partner_id, row.cost_cents, row.status_updated_at],
      ['pending', null, 0, row.created_at],
    );
    assert.ok(row.lease_until! > new Date().toISOString(), 'the lease runs');
    assert.equal(
      (await getJson(ta, `/api/leads/${res.json().id}`)).status,
      'pending',
      'still pending while the partner holds the call',
    );
    await partner.arrived;
    partner.release();
    const lead = await until(async () => {
      const now = await getJson(ta, `/api/leads/${res.json().id}`);
      return now.status !== 'pending' && now;
    }, 'the lead to leave pending once the partner answered');
    assert.equal(lead.status, 'delivered');
    assert.match(lead.autologin_url, /^https:\/\/broker\.example\/login\//);
  });
});
