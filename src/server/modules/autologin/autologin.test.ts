import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead, type World } from '../../../../test/distribution-world.js';
import { tokenHash } from './tokens.js';
import { loadShippedRanges } from '../../geo/ip-country.js';

const BASE = 'https://leads.example.com';

const setBase = async (ta: TestApp, url: string | null) => {
  const res = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: '/api/hosting/public-url',
    payload: { public_base_url: url },
  });
  assert.equal(res.statusCode, 200, res.body);
};

/** A world of one accepting loopback partner, tracking its links (or not), with a public base URL. */
async function world(t: Parameters<typeof buildTestApp>[0], ta: TestApp, fields: Record<string, unknown>) {
  await setBase(ta, BASE);
  return makeWorld(t, ta, [{ fields }]);
}

async function deliver(ta: TestApp, w: World, headers: Record<string, string> = {}, lead = sampleLead()) {
  const res = await postLead(ta, w.token, lead, headers);
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json() as { id: string; status: string; autologin_url: string | null };
  assert.equal(body.status, 'delivered');
  return body;
}

const open = (ta: TestApp, url: string, headers: Record<string, string> = {}) =>
  ta.app.inject({ method: 'GET', url: url.startsWith(BASE) ? url.slice(BASE.length) : url, headers });

const linkRow = (ta: TestApp, leadId: string) =>
  ta.db.selectFrom('autologin_links').selectAll().where('lead_id', '=', leadId).executeTakeFirstOrThrow();
const opensOf = (ta: TestApp, leadId: string) =>
  ta.db.selectFrom('autologin_opens').selectAll().where('lead_id', '=', leadId).orderBy('opened_at').execute();
const storedUrl = async (ta: TestApp, leadId: string) =>
  (await ta.db.selectFrom('leads').select('autologin_url').where('id', '=', leadId).executeTakeFirstOrThrow())
    .autologin_url!;

forEachDatabase('Tracked autologin links', (engine) => {
  test('off by default: the provider gets the partner URL; a partner setting that is on answers /go/{token}', async (t) => {
    const ta = await buildTestApp(t, engine);
    const plain = await world(t, ta, {});
    assert.equal(plain.partners.length, 1);
    const partner = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/partners/${plain.partners[0].id}` });
    assert.equal(partner.json().track_autologin, false);
    assert.equal(partner.json().autologin_single_use, false);
    const a = await deliver(ta, plain);
    assert.match(a.autologin_url!, /^https:\/\/broker\.example\/login\//);

    const tracked = await makeWorld(t, ta, [{ fields: { track_autologin: true } }]);
    const sent = sampleLead();
    const b = await deliver(ta, tracked, { 'idempotency-key': 'k-1' }, sent);
    assert.match(b.autologin_url!, /^https:\/\/leads\.example\.com\/go\/[A-Za-z0-9_-]{43}$/);
    // The operator still sees the partner's URL.
    const lead = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${b.id}` });
    assert.match(lead.json().autologin_url, /^https:\/\/broker\.example\/login\//);
    // The token carries nothing: neither the lead id nor the partner's, in any spelling; only its hash is stored.
    const token = b.autologin_url!.split('/go/')[1];
    for (const id of [b.id, tracked.partners[0].id]) {
      assert.ok(!token.includes(id));
      assert.ok(!Buffer.from(token, 'base64url').toString('latin1').includes(id));
    }
    const row = await linkRow(ta, b.id);
    assert.equal(row.token_hash, tokenHash(token));
    assert.ok(!JSON.stringify(row).includes(token));
    // The replay of the same Idempotency-Key answers the same link (derived, not stored).
    const again = await postLead(ta, tracked.token, sent, { 'idempotency-key': 'k-1' });
    assert.equal(again.json().autologin_url, b.autologin_url);

    // Turned off again (PATCH): the partner's URL.
    const off = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/partners/${tracked.partners[0].id}`,
      payload: { track_autologin: false },
    });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().track_autologin, false);
    assert.match((await deliver(ta, tracked)).autologin_url!, /^https:\/\/broker\.example\/login\//);
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/partners/${tracked.partners[0].id}`,
      payload: { track_autologin: true },
    });

    // Without a public base URL, the partner's URL as before.
    await setBase(ta, null);
    const c = await deliver(ta, tracked);
    assert.match(c.autologin_url!, /^https:\/\/broker\.example\/login\//);
  });

  test('an open redirects (302, no referrer, no store) and is recorded once per request, with an event', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w);
    const target = await storedUrl(ta, lead.id);

    const first = await open(ta, lead.autologin_url!, { 'user-agent': 'Mozilla/5.0 ' + 'x'.repeat(2000) });
    assert.equal(first.statusCode, 302, first.body);
    assert.equal(first.headers.location, target);
    assert.equal(first.headers['referrer-policy'], 'no-referrer');
    assert.equal(first.headers['cache-control'], 'no-store');
    const second = await open(ta, lead.autologin_url!, { 'user-agent': 'Other/1.0' });
    assert.equal(second.statusCode, 302);

    const row = await linkRow(ta, lead.id);
    assert.equal(Number(row.opens), 2);
    assert.ok(row.first_open_at && row.last_open_at && row.first_open_at <= row.last_open_at);
    const opens = await opensOf(ta, lead.id);
    assert.equal(opens.length, 2);
    assert.equal(opens[0].user_agent.length, 512, 'the user agent is bounded');
    assert.equal(opens[0].ip, '127.0.0.1');
    assert.equal(opens[0].ip_country, null);

    const events = await ta.db
      .selectFrom('events')
      .selectAll()
      .where('type', '=', 'lead.autologin_opened')
      .where('lead_id', '=', lead.id)
      .orderBy('id')
      .execute();
    assert.equal(events.length, 2);
    const data = JSON.parse(events[1].data);
    // The same event on both engines (PostgreSQL writes it inside the open's one statement).
    assert.deepEqual(Object.keys(data).sort(), ['opened_at', 'opens', 'redirected', 'single_use']);
    assert.deepEqual(
      { opens: data.opens, redirected: data.redirected, single_use: data.single_use },
      { opens: 2, redirected: true, single_use: false },
    );
    assert.ok(
      (await opensOf(ta, lead.id)).some((o) => o.opened_at === data.opened_at),
      "the event's opened_at is the open's time",
    );
    assert.ok(!events[1].data.includes('127.0.0.1') && !events[1].data.includes('Other/1.0'), 'no address or agent');
  });

  test('single use: of 20 concurrent opens exactly one redirects; the rest get a plain page without the link', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true, autologin_single_use: true });
    const lead = await deliver(ta, w);
    const target = await storedUrl(ta, lead.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => open(ta, lead.autologin_url!)));
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [302, ...Array(19).fill(410)]);
    for (const r of answers.filter((x) => x.statusCode === 410)) {
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.ok(!r.body.includes(target) && !r.body.includes('broker.example'));
      assert.equal(r.headers['cache-control'], 'no-store');
    }
    assert.equal(Number((await linkRow(ta, lead.id)).opens), 20);
    assert.equal((await opensOf(ta, lead.id)).filter((o) => o.redirected === 1).length, 1);
  });

  test('a link whose lead lost its autologin URL since answers the plain page, not a redirect', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w);
    await ta.db.updateTable('leads').set({ autologin_url: null }).where('id', '=', lead.id).execute();
    const res = await open(ta, lead.autologin_url!);
    assert.equal(res.statusCode, 410);
    assert.ok(!res.body.includes('broker.example'));
    assert.deepEqual(
      (await opensOf(ta, lead.id)).map((o) => o.redirected),
      [0],
    );
  });

  test('unknown and malformed tokens: 404, nothing recorded', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w);
    const token = lead.autologin_url!.split('/go/')[1];
    const mistyped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    // (A control character or an encoded slash is refused before routing, 400, as on every path: http/request-target.ts.)
    for (const bad of [mistyped, 'x', 'a'.repeat(190), '%C3%A9']) {
      const res = await open(ta, `/go/${bad}`);
      assert.equal(res.statusCode, 404, `${bad}: ${res.body}`);
      assert.ok(!res.body.includes('broker.example'));
    }
    // Past the router's longest parameter: the 400 every path gets (app.ts maxParamLength).
    expectProblem(await open(ta, `/go/${'a'.repeat(500)}`), 400, 'validation_failed');
    assert.equal(Number((await linkRow(ta, lead.id)).opens), 0);
    assert.equal((await opensOf(ta, lead.id)).length, 0);
  });

  test('rate limited per address: 429 past RATE_LIMIT_PER_IP', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_IP: '30' } });
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w);
    const path = lead.autologin_url!.slice(BASE.length);
    const codes: number[] = [];
    for (let i = 0; i < 31; i++) codes.push((await open(ta, path)).statusCode);
    assert.deepEqual([...new Set(codes.slice(0, 30))], [302]);
    expectProblem(await open(ta, path), 429, 'rate_limited');
    // Another address is not refused.
    const other = await ta.app.inject({ method: 'GET', url: path, remoteAddress: '127.0.0.9' });
    assert.equal(other.statusCode, 302);
  });
});

forEachDatabase('Tracked autologin links: a lead shows its opens', (engine) => {
  test('count, first, last and the recent opens; address and agent masked without leads:contacts', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w);
    const before = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${lead.id}` });
    assert.deepEqual(before.json().autologin_opens, { count: 0, first_at: null, last_at: null, recent: [] });
    const path = lead.autologin_url!.slice(BASE.length);
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120';
    await ta.app.inject({ method: 'GET', url: path, remoteAddress: '203.0.113.7', headers: { 'user-agent': ua } });
    await ta.app.inject({ method: 'GET', url: path, remoteAddress: '198.51.100.9', headers: { 'user-agent': ua } });

    const full = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${lead.id}` })).json();
    const o = full.autologin_opens;
    assert.equal(o.count, 2);
    assert.ok(o.first_at <= o.last_at);
    assert.deepEqual(
      o.recent.map((r: { ip: string; user_agent: string; redirected: boolean; ip_country: string | null }) => [
        r.ip,
        r.user_agent,
        r.redirected,
        r.ip_country,
      ]),
      [
        ['198.51.100.9', ua, true, null],
        ['203.0.113.7', ua, true, null],
      ],
    );
    const key = await newApiKey(ta, ['leads:view']);
    const masked = (await call(ta.app, key.secret, { method: 'GET', url: `/api/leads/${lead.id}` })).json();
    assert.equal(masked.autologin_opens.count, 2);
    assert.deepEqual(
      masked.autologin_opens.recent.map((r: { ip: string; user_agent: string }) => [r.ip, r.user_agent]),
      [
        ['198.51.100.*', 'Mozilla/5.0 …'],
        ['203.0.113.*', 'Mozilla/5.0 …'],
      ],
    );
  });
});

forEachDatabase('Tracked autologin links: the country of an open', (engine) => {
  test("an open from another country than the lead's is flagged; a documentation or private address has none", async (t) => {
    await loadShippedRanges();
    const ta = await buildTestApp(t, engine);
    const w = await world(t, ta, { track_autologin: true });
    const lead = await deliver(ta, w); // a DE lead
    const path = lead.autologin_url!.slice(BASE.length);
    // Addresses as data: inject() sends nothing anywhere.
    for (const remoteAddress of ['8.8.8.8', '81.91.160.10', '203.0.113.7'])
      assert.equal((await ta.app.inject({ method: 'GET', url: path, remoteAddress })).statusCode, 302);
    const stored = await opensOf(ta, lead.id);
    assert.deepEqual(stored.map((o) => [o.ip, o.ip_country]).sort(), [
      ['203.0.113.7', null],
      ['8.8.8.8', 'US'],
      ['81.91.160.10', 'DE'],
    ]);
    const recent = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${lead.id}` })).json()
      .autologin_opens.recent as { ip: string; ip_country: string | null; country_mismatch: boolean }[];
    assert.deepEqual(recent.map((r) => [r.ip, r.ip_country, r.country_mismatch]).sort(), [
      ['203.0.113.7', null, false],
      ['8.8.8.8', 'US', true],
      ['81.91.160.10', 'DE', false],
    ]);
  });
});

forEachDatabase('Tracked autologin links: the Leads filter', (engine) => {
  test('autologin_opened=true: leads whose link was opened; false: tracked and never opened; untracked in neither', async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracked = await world(t, ta, { track_autologin: true });
    const plain = await makeWorld(t, ta, [{}]);
    const opened = await deliver(ta, tracked);
    const unopened = await deliver(ta, tracked);
    const untracked = await deliver(ta, plain);
    assert.equal((await open(ta, opened.autologin_url!)).statusCode, 302);
    const ids = async (query: string) => {
      const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/search?${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data as { id: string }[]).map((l) => l.id).sort();
    };
    assert.deepEqual(await ids('autologin_opened=true'), [opened.id]);
    assert.deepEqual(await ids('autologin_opened=false'), [unopened.id]);
    assert.deepEqual(await ids('autologin_opened=false&date_type=delivered'), [unopened.id]);
    assert.equal((await ids('')).length, 3);
    assert.ok(!(await ids('autologin_opened=false')).includes(untracked.id));
    const count = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/count?autologin_opened=true' });
    assert.equal(count.statusCode, 200, count.body);
    assert.equal(count.json().count, 1);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?autologin_opened=maybe' }),
      400,
      'validation_failed',
    );
  });
});
