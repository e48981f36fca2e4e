// The portal's integration (issue 27): campaigns, intake documentation generated from the intake's
// own schema (its curl example run for real), intake token rotation, postbacks with their delivery
// log and a test send, each on the principal's own provider only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newPortalUser,
  type TestApp,
} from '../../../../test/helpers.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';
import { IntakeLead, IntakeStatus } from '../intake/schemas.js';
import { TOKEN_PLACEHOLDER } from './intake-docs.js';

/** The words of a shell command line as sh reads them: single-quoted runs, '\'' escapes, line continuations. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  const text = line.replace(/\\\n/g, ' ');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      assert.ok(end > i, 'unclosed quote');
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      word = (word ?? '') + text[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** The request a curl command line makes (the options the docs use: -X, -H, --data). */
function parseCurl(command: string) {
  const words = shellWords(command);
  assert.equal(words[0], 'curl');
  let method = 'GET';
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w === '-X') method = words[++i];
    else if (w === '-H') {
      const h = words[++i];
      headers[h.slice(0, h.indexOf(':')).trim().toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (w === '--data') body = words[++i];
    else if (w.startsWith('-')) assert.fail(`curl option the test does not know: ${w}`);
    else url = w;
  }
  return { method, url, headers, body };
}

const portal = (ta: TestApp, token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  call(ta.app, token, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });

forEachDatabase('portal integration', (engine) => {
  test('intake docs are generated from the intake schema, and their curl example works as sent', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db, { name: 'Docs Media' });
    const campaign = await insertCampaign(ta.db, provider, null, { name: 'Docs campaign' });
    const user = await newPortalUser(ta, provider);
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const origin = `http://127.0.0.1:${(ta.app.server.address() as { port: number }).port}`;
    const set = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/hosting/public-url',
      payload: { public_base_url: origin },
    });
    assert.equal(set.statusCode, 200, set.body);

    const res = await portal(ta, user.key, 'GET', `/api/portal/campaigns/${campaign}/docs`);
    assert.equal(res.statusCode, 200, res.body);
    const docs = res.json();
    assert.equal(docs.url, `${origin}/api/intake/leads`);
    assert.equal(docs.method, 'POST');
    // Every property of the intake body is documented, with required as the schema says, and nothing else.
    const properties = Object.keys(IntakeLead.properties);
    assert.deepEqual(
      docs.fields.map((f: { name: string }) => f.name),
      properties,
    );
    for (const f of docs.fields) {
      assert.equal(f.required, (IntakeLead.required as string[]).includes(f.name), `${f.name} required`);
      assert.ok(f.description.length > 5, `${f.name} described`);
      assert.ok('example' in f, `${f.name} has an example`);
    }
    assert.deepEqual(Object.keys(docs.example_body), properties);
    assert.equal(docs.example_body.campaign_id, campaign);
    assert.ok(docs.headers.some((h: { name: string }) => h.name === 'Idempotency-Key'));
    // Every status of the answer, and the error codes.
    const statuses = (IntakeStatus.anyOf as { const: string }[]).map((s) => s.const);
    const documented = docs.answers.filter((a: { http_status: number }) => a.http_status === 201);
    assert.deepEqual(
      documented.map((a: { status: string }) => a.status),
      statuses,
    );
    for (const a of documented) assert.ok(a.description.length > 5, `${a.status} described`);
    const codes = docs.answers.filter((a: { code: string | null }) => a.code).map((a: { code: string }) => a.code);
    for (const code of ['validation_failed', 'unauthorized', 'conflict', 'rate_limited', 'unavailable'])
      assert.ok(codes.includes(code), code);

    // The token is only known to the provider: rotate it (sessions only), then run the curl example.
    expectProblem(await portal(ta, user.key, 'POST', '/api/portal/intake-token/rotate'), 403, 'session_required');
    // An operator viewing as the provider reads the docs, and rotates nothing.
    const viewAs = (
      await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/traffic-providers/${provider}/view-as` })
    ).json().token;
    assert.equal((await portal(ta, viewAs, 'GET', `/api/portal/campaigns/${campaign}/docs`)).statusCode, 200);
    expectProblem(await portal(ta, viewAs, 'POST', '/api/portal/intake-token/rotate'), 403, 'forbidden');
    const rotated = await portal(ta, user.token, 'POST', '/api/portal/intake-token/rotate');
    assert.equal(rotated.statusCode, 200, rotated.body);
    const { token, intake_url } = rotated.json();
    assert.match(token, /^lgt_/);
    assert.equal(intake_url, docs.url);
    const req = parseCurl(docs.curl);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, docs.url);
    assert.deepEqual(JSON.parse(req.body!), docs.example_body);
    const headers = { ...req.headers, authorization: req.headers.authorization.replace(TOKEN_PLACEHOLDER, token) };
    const sent = await fetch(req.url, { method: req.method, headers, body: req.body });
    const answer = (await sent.json()) as { status: string; id: string };
    assert.equal(sent.status, 201, JSON.stringify(answer));
    assert.ok(statuses.includes(answer.status), answer.status);
    const lead = await ta.db
      .selectFrom('leads')
      .select(['campaign_id', 'traffic_provider_id', 'email'])
      .where('id', '=', answer.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(lead, { campaign_id: campaign, traffic_provider_id: provider, email: docs.example_body.email });

    // Rotating again: the old token fails at intake (with a code the docs list), the new one works.
    const again = (await portal(ta, user.token, 'POST', '/api/portal/intake-token/rotate')).json();
    const old = await fetch(req.url, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'another-1' },
      body: req.body,
    });
    assert.equal(old.status, 401);
    assert.ok(codes.includes(((await old.json()) as { code: string }).code));
    const fresh = await fetch(req.url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${again.token}`, 'idempotency-key': 'another-2' },
      body: req.body,
    });
    assert.equal(fresh.status, 201);

    // Audited as the provider user; the token itself is not in the log.
    const entries = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'actor_kind', 'details'])
      .where('action', '=', 'portal.token_rotated')
      .execute();
    assert.equal(entries.length, 2);
    for (const e of entries) {
      assert.equal(e.actor_kind, 'provider_user');
      assert.equal(e.actor_id, user.id);
      assert.ok(!e.details.includes(token) && !e.details.includes(again.token));
    }
  });

  test("campaigns: the provider's own, payout as the operator shows it; another's docs are 404", async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await insertTrafficProvider(ta.db);
    const b = await insertTrafficProvider(ta.db);
    const mine = await insertCampaign(ta.db, a, null, { name: 'Mine' });
    const theirs = await insertCampaign(ta.db, b, null, { name: 'Theirs' });
    const user = await newPortalUser(ta, a);
    const list = await portal(ta, user.token, 'GET', '/api/portal/campaigns');
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().data, [
      {
        id: mine,
        name: 'Mine',
        status: 'active',
        countries: [],
        payout: { model: 'cpl', amount: 10, currency: 'USD', by_country: {} },
      },
    ]);
    expectProblem(await portal(ta, user.token, 'GET', `/api/portal/campaigns/${theirs}/docs`), 404, 'not_found');
    const settings = await getJson(ta, `/api/traffic-providers/${a}/portal`);
    const { partner_words: _words, ...put } = settings;
    const hide = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/traffic-providers/${a}/portal`,
      payload: { ...put, show_payout: false },
    });
    assert.equal(hide.statusCode, 200, hide.body);
    assert.equal((await portal(ta, user.token, 'GET', '/api/portal/campaigns')).json().data[0].payout, null);
  });

  test('postbacks: set, test-sent to a loopback tracker, their delivery log; another provider unreachable', async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await insertTrafficProvider(ta.db);
    const b = await insertTrafficProvider(ta.db);
    const user = await newPortalUser(ta, a);
    const tracker = await startReceiver(t);
    // B has a postback, a lead and a delivery of its own.
    const bPut = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/traffic-providers/${b}/postbacks`,
      payload: { postbacks: [{ event_type: 'lead.received', campaign_id: null, url: `${tracker.url}?b={sub_id1}` }] },
    });
    assert.equal(bPut.statusCode, 200, bPut.body);

    const postbacks = [{ event_type: 'lead.received', campaign_id: null, url: `${tracker.url}?click={sub_id1}` }];
    const put = await portal(ta, user.key, 'PUT', '/api/portal/postbacks', { postbacks });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json().postbacks, postbacks);
    assert.deepEqual((await portal(ta, user.token, 'GET', '/api/portal/postbacks')).json().postbacks, postbacks);
    const bad = await portal(ta, user.token, 'PUT', '/api/portal/postbacks', {
      postbacks: [{ event_type: 'lead.received', campaign_id: null, url: 'http://192.168.1.10/pb' }],
    });
    assert.equal(expectProblem(bad, 400, 'validation_failed').errors?.[0].field, 'postbacks/0/url');
    // B's postbacks are untouched.
    assert.match((await getJson(ta, `/api/traffic-providers/${b}/postbacks`)).postbacks[0].url, /\?b=\{sub_id1\}$/);
    const audited = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'actor_kind', 'target_id'])
      .where('action', '=', 'portal.postbacks_updated')
      .execute();
    assert.deepEqual(audited, [{ actor_id: user.id, actor_kind: 'provider_user', target_id: a }]);

    // The test send reaches the tracker through the outbound guard, filled from a sample lead.
    const tried = await portal(ta, user.token, 'POST', '/api/portal/postbacks/test', { event_type: 'lead.received' });
    assert.equal(tried.statusCode, 200, tried.body);
    assert.equal(tried.json().ok, true);
    assert.equal(tracker.received.length, 1);
    assert.match(tracker.received[0].url, /click=click-123$/);
    const tested = await ta.db
      .selectFrom('audit_log')
      .select(['actor_kind'])
      .where('action', '=', 'portal.postback_tested')
      .execute();
    assert.deepEqual(tested, [{ actor_kind: 'provider_user' }]);
    // With a lead: its own, never B's.
    const [aLead] = await insertLeads(ta.db, [{ traffic_provider_id: a, sub_id1: 'own-click' }]);
    const [bLead] = await insertLeads(ta.db, [{ traffic_provider_id: b, sub_id1: 'b-click' }]);
    const own = await portal(ta, user.token, 'POST', '/api/portal/postbacks/test', {
      event_type: 'lead.received',
      lead_id: aLead,
    });
    assert.match(own.json().url, /click=own-click$/);
    expectProblem(
      await portal(ta, user.token, 'POST', '/api/portal/postbacks/test', {
        event_type: 'lead.received',
        lead_id: bLead,
      }),
      404,
      'not_found',
    );
    assert.equal(tracker.received.length, 2, 'nothing sent for B');

    // The delivery log: A's deliveries only; B's by id is 404.
    await ta.app.events.fanOut();
    const deliveries = await ta.db
      .selectFrom('event_deliveries')
      .select(['id', 'destination_id'])
      .where('destination_kind', '=', 'postback')
      .execute();
    const aDelivery = deliveries.find((d) => d.destination_id === a)!;
    const bDelivery = deliveries.find((d) => d.destination_id === b)!;
    assert.ok(aDelivery && bDelivery, JSON.stringify(deliveries));
    const log = await portal(ta, user.key, 'GET', '/api/portal/postbacks/deliveries');
    assert.equal(log.statusCode, 200, log.body);
    assert.deepEqual(
      log.json().data.map((d: { id: string }) => String(d.id)),
      [String(aDelivery.id)],
    );
    const one = await portal(ta, user.key, 'GET', `/api/portal/postbacks/deliveries/${aDelivery.id}`);
    assert.equal(one.statusCode, 200, one.body);
    assert.match(one.json().payload, /click=own-click$/);
    expectProblem(
      await portal(ta, user.key, 'GET', `/api/portal/postbacks/deliveries/${bDelivery.id}`),
      404,
      'not_found',
    );
  });
});
