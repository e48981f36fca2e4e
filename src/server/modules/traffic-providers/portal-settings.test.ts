// What a traffic provider's portal shows, as operators set it (issue 27): GET/PUT
// /api/traffic-providers/{id}/portal, validated field by field, audited, with the words partners
// have used on the provider's leads to map.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertLeads, insertPartner, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  login,
  newApiKey,
  newOperator,
  newPortalUser,
  OWNER,
  type TestApp,
} from '../../../../test/helpers.js';

/** An operator holding an existing role, signed in. */
async function newOperatorWithRole(ta: TestApp, roleId: string) {
  const email = `scoped-${Date.now()}@example.test`;
  const res = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/operators',
    payload: {
      email,
      name: 'Scoped',
      password: 'scoped-password-1',
      role_id: roleId,
      current_password: OWNER.password,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return login(ta.app, email, 'scoped-password-1');
}

const VALID = {
  portal_enabled: true,
  show_sale_status: true,
  show_payout: false,
  show_contacts: true,
  ftd_hold_hours: 48,
  sale_status_map: { ' Deposited ': 'converted', CALLBACK: 'callback' },
};

forEachDatabase('traffic provider portal settings', (engine) => {
  test('read with the partner words, set as a whole (keys trimmed and lower-cased), audited', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const other = await insertTrafficProvider(ta.db);
    await insertLeads(ta.db, [
      { traffic_provider_id: provider, sale_status: ' Deposited ' },
      { traffic_provider_id: provider, sale_status: 'deposited' },
      { traffic_provider_id: provider, sale_status: 'Callback' },
      { traffic_provider_id: provider, sale_status: null },
      { traffic_provider_id: other, sale_status: 'OtherWord' },
    ]);
    const url = `/api/traffic-providers/${provider}/portal`;
    assert.deepEqual(await getJson(ta, url), {
      portal_enabled: true,
      show_sale_status: false,
      show_payout: true,
      show_contacts: false,
      ftd_hold_hours: 0,
      sale_status_map: {},
      partner_words: ['callback', 'deposited'],
    });

    const put = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: VALID });
    assert.equal(put.statusCode, 200, put.body);
    const expected = {
      ...VALID,
      sale_status_map: { deposited: 'converted', callback: 'callback' },
      partner_words: ['callback', 'deposited'],
    };
    assert.deepEqual(put.json(), expected);
    assert.deepEqual(await getJson(ta, url), expected);

    // The portal reads them: what it shows, and the provider-facing word.
    const user = await newPortalUser(ta, provider);
    const me = (await call(ta.app, user.token, { method: 'GET', url: '/api/portal/me' })).json();
    assert.deepEqual(me.shows, { sale_status: true, payout: false, contacts: true, ftd_hold_hours: 48 });

    const entries = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'actor_kind', 'target_id', 'details'])
      .where('action', '=', 'traffic_provider.portal_updated')
      .execute();
    assert.equal(entries.length, 1);
    assert.equal(entries[0].actor_id, ta.ownerId);
    assert.equal(entries[0].actor_kind, 'operator');
    assert.equal(entries[0].target_id, provider);
    const details = JSON.parse(entries[0].details);
    assert.equal(details.before.ftd_hold_hours, 0);
    assert.deepEqual(details.after.sale_status_map, expected.sale_status_map);

    // Closing the portal refuses its users from the next request on.
    const closed = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url,
      payload: { ...VALID, portal_enabled: false },
    });
    assert.equal(closed.statusCode, 200, closed.body);
    expectProblem(await call(ta.app, user.token, { method: 'GET', url: '/api/portal/me' }), 401, 'unauthorized');
  });

  test('bad settings: 400 naming each field; nothing changes; access as declared', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const url = `/api/traffic-providers/${provider}/portal`;
    const before = await getJson(ta, url);
    const fieldsOf = async (payload: unknown) => {
      const res = await call(ta.app, ta.ownerToken, { method: 'PUT', url, payload: payload as object });
      return (expectProblem(res, 400, 'validation_failed').errors ?? []).map((e) => e.field);
    };
    assert.deepEqual(await fieldsOf({ ...VALID, ftd_hold_hours: 721 }), ['ftd_hold_hours']);
    assert.deepEqual(await fieldsOf({ ...VALID, ftd_hold_hours: -1 }), ['ftd_hold_hours']);
    assert.deepEqual(await fieldsOf({ ...VALID, ftd_hold_hours: 1.5 }), ['ftd_hold_hours']);
    const badWord = await fieldsOf({ ...VALID, sale_status_map: { deposited: 'paid' } });
    assert.ok(
      badWord.some((f) => f.startsWith('sale_status_map')),
      badWord.join(),
    );
    assert.deepEqual(await fieldsOf({ ...VALID, sale_status_map: { Deposited: 'converted', ' deposited': 'new' } }), [
      'sale_status_map/ deposited',
    ]);
    assert.deepEqual(await fieldsOf({ ...VALID, sale_status_map: { '  ': 'new' } }), ['sale_status_map/  ']);
    const missing = await fieldsOf({ show_payout: true });
    assert.ok(missing.includes('portal_enabled'), missing.join());
    assert.deepEqual(await fieldsOf({ ...VALID, show_payout: 'yes' }), ['show_payout']);
    assert.deepEqual(await getJson(ta, url), before, 'nothing changed');

    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/traffic-providers/nope/portal' }),
      404,
      'not_found',
    );
    const viewer = await newApiKey(ta, ['traffic_providers:view']);
    assert.equal((await call(ta.app, viewer.secret, { method: 'GET', url })).statusCode, 200);
    expectProblem(await call(ta.app, viewer.secret, { method: 'PUT', url, payload: VALID }), 403, 'insufficient_scope');
    const user = await newPortalUser(ta, provider);
    expectProblem(await call(ta.app, user.token, { method: 'GET', url }), 401, 'unauthorized');
  });

  test("the partners' words are contacts-masked without leads:contacts, and a role limited to partners reads only theirs", async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const mine = await insertPartner(ta.db);
    const theirs = await insertPartner(ta.db);
    await insertLeads(ta.db, [
      { traffic_provider_id: provider, partner_id: mine, sale_status: 'call back jane.doe@example.com' },
      { traffic_provider_id: provider, partner_id: theirs, sale_status: 'TheirWord' },
    ]);
    const url = `/api/traffic-providers/${provider}/portal`;
    assert.deepEqual((await getJson(ta, url)).partner_words, ['call back jane.doe@example.com', 'theirword']);
    const plain = await newOperator(ta, ['traffic_providers:view']);
    const words = (await call(ta.app, plain.token, { method: 'GET', url })).json().partner_words as string[];
    assert.equal(words.length, 2);
    assert.ok(!words.some((w) => w.includes('jane.doe')), `contacts in ${JSON.stringify(words)}`);
    const role = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: {
        name: 'brand manager',
        permissions: ['traffic_providers:view', 'leads:contacts'],
        scope: { traffic_provider_ids: null, partner_ids: [mine] },
      },
    });
    assert.equal(role.statusCode, 201, role.body);
    const scoped = await newOperatorWithRole(ta, role.json().id);
    const seen = await call(ta.app, scoped, { method: 'GET', url });
    assert.equal(seen.statusCode, 200, seen.body);
    assert.deepEqual(seen.json().partner_words, ['call back jane.doe@example.com']);
  });
});
