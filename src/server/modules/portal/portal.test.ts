// The traffic-provider portal's accounts (issue 27): invitation → password → sign-in on the usual
// login route → a portal session that opens /api/portal/ only; keys of its own; a disabled user
// or provider refused from the next request on; "View as provider" read only; all audited with
// the provider user's own actor kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newSecret, totpAt } from '../../auth/totp.js';
import { insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newOperator,
  newPortalUser,
  OWNER,
} from '../../../../test/helpers.js';

const me = (app: Parameters<typeof call>[0], token: string) =>
  call(app, token, { method: 'GET', url: '/api/portal/me' });

forEachDatabase('portal accounts', (engine) => {
  test('invitation → password → sign-in: a portal session that opens the portal and nothing else', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    const inv = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${provider}/users`,
      payload: { email: 'Aff@Acme.test', name: 'Affiliate' },
    });
    assert.equal(inv.statusCode, 201, inv.body);
    const { invitation_token, invitation_url, status, email } = inv.json();
    assert.match(invitation_token, /^lgi_[0-9A-Za-z]{50}$/);
    assert.ok(invitation_url.endsWith(`/portal/invitation#token=${invitation_token}`));
    assert.equal(status, 'invited');
    assert.equal(email, 'aff@acme.test');
    // Shown once: the list has no token, and the database keeps only its hash.
    const list = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/traffic-providers/${provider}/users` });
    assert.equal(list.json().data.length, 1);
    assert.ok(!list.body.includes(invitation_token) && !list.body.includes('invitation_token'));
    const stored = await ta.db.selectFrom('provider_users').select('invitation_hash').executeTakeFirstOrThrow();
    assert.notEqual(stored.invitation_hash, invitation_token);

    // Not yet accepted: no sign-in.
    const early = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'aff@acme.test', password: 'whatever-password' },
    });
    expectProblem(early, 401, 'unauthorized');

    const bad = await ta.app.inject({
      method: 'POST',
      url: '/api/portal/invitations/accept',
      payload: { token: 'lgi_nonsense', password: 'a-good-password-1' },
    });
    assert.deepEqual(expectProblem(bad, 400, 'validation_failed').errors?.[0].field, 'token');
    const accepted = await ta.app.inject({
      method: 'POST',
      url: '/api/portal/invitations/accept',
      payload: { token: invitation_token, password: 'a-good-password-1' },
    });
    assert.equal(accepted.statusCode, 201, accepted.body);
    // Once only.
    const again = await ta.app.inject({
      method: 'POST',
      url: '/api/portal/invitations/accept',
      payload: { token: invitation_token, password: 'another-password-2' },
    });
    assert.equal(expectProblem(again, 400, 'validation_failed').errors?.[0].field, 'token');

    const res = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'aff@acme.test', password: 'a-good-password-1' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.kind, 'provider');
    assert.equal(body.operator, undefined);
    assert.equal(body.portal.traffic_provider.name, 'Acme Media');
    assert.match(body.token, /^lgps_/);
    const who = await me(ta.app, body.token);
    assert.equal(who.statusCode, 200, who.body);
    assert.equal(who.json().traffic_provider.id, provider);
    assert.deepEqual(who.json().scopes, ['portal:edit', 'portal:view']);
    // The dashboard's own routes refuse it, as does whoami.
    expectProblem(await call(ta.app, body.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    expectProblem(await call(ta.app, body.token, { method: 'GET', url: '/api/leads/search' }), 401, 'unauthorized');
    // And an operator's session does not open the portal.
    expectProblem(await me(ta.app, ta.ownerToken), 401, 'unauthorized');

    const audit = await ta.db
      .selectFrom('audit_log')
      .select(['action', 'actor_kind', 'actor_email'])
      .where('action', 'in', ['provider_user.invited', 'provider_user.accepted', 'portal.login'])
      .orderBy('at')
      .execute();
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor_kind]),
      [
        ['provider_user.invited', 'operator'],
        ['provider_user.accepted', 'provider_user'],
        ['portal.login', 'provider_user'],
      ],
    );
  });

  test('one email signs in as one kind of person: invitations and operators refuse a taken email (409)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const taken = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${provider}/users`,
      payload: { email: OWNER.email },
    });
    expectProblem(taken, 409, 'conflict');
    const pu = await newPortalUser(ta, provider);
    const op = await newOperator(ta, ['roles:view']);
    const clash = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: pu.email,
        name: 'Clash',
        password: 'password-clash-1',
        role_id: op.roleId,
        current_password: OWNER.password,
      },
    });
    expectProblem(clash, 409, 'conflict');
  });

  test('wrong passwords are throttled like operators (5 per account), and two-factor is asked for when on', async (t) => {
    const ta = await buildTestApp(t, engine);
    const pu = await newPortalUser(ta, await insertTrafficProvider(ta.db));
    const attempt = (password: string, extra: Record<string, string> = {}) =>
      ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: pu.email, password, ...extra } });
    for (let i = 0; i < 5; i++) expectProblem(await attempt('wrong-password-x'), 401, 'unauthorized');
    expectProblem(await attempt(pu.password), 429, 'rate_limited');
    await ta.db.deleteFrom('login_failures').execute();

    const secret = newSecret();
    await ta.db.updateTable('provider_users').set({ totp_secret: secret }).where('id', '=', pu.id).execute();
    expectProblem(await attempt(pu.password), 401, 'totp_required');
    expectProblem(
      await attempt(pu.password, { totp_code: '000000' === totpAt(secret, Date.now()) ? '111111' : '000000' }),
      401,
      'unauthorized',
    );
    const ok = await attempt(pu.password, { totp_code: totpAt(secret, Date.now()) });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().kind, 'provider');
  });

  test('own keys: made from a session only, portal scopes only, shown once; revoked or user disabled → 401 at once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const pu = await newPortalUser(ta, provider);
    assert.equal((await me(ta.app, pu.key)).statusCode, 200);
    // A key does not make keys.
    const byKey = await call(ta.app, pu.key, {
      method: 'POST',
      url: '/api/portal/api-keys',
      payload: { name: 'x', scopes: ['portal:view'] },
    });
    expectProblem(byKey, 403, 'session_required');
    // Operator scopes are not portal scopes.
    const wrongScope = await call(ta.app, pu.token, {
      method: 'POST',
      url: '/api/portal/api-keys',
      payload: { name: 'x', scopes: ['leads:view'] },
    });
    expectProblem(wrongScope, 400, 'validation_failed');
    // A view-only key cannot write.
    const view = (
      await call(ta.app, pu.token, {
        method: 'POST',
        url: '/api/portal/api-keys',
        payload: { name: 'read only', scopes: ['portal:view'] },
      })
    ).json();
    expectProblem(
      await call(ta.app, view.secret, { method: 'DELETE', url: `/api/portal/api-keys/${pu.keyId}` }),
      403,
      'insufficient_scope',
    );
    const keys = await call(ta.app, pu.token, { method: 'GET', url: '/api/portal/api-keys' });
    assert.equal(keys.json().data.length, 2);
    assert.ok(!keys.body.includes(view.secret));

    // The operator sees and revokes the user's key.
    const opKeys = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/traffic-providers/${provider}/users/${pu.id}/api-keys`,
    });
    assert.equal(opKeys.json().data.length, 2);
    const revoked = await call(ta.app, ta.ownerToken, {
      method: 'DELETE',
      url: `/api/traffic-providers/${provider}/users/${pu.id}/api-keys/${view.id}`,
    });
    assert.equal(revoked.json().status, 'revoked');
    expectProblem(await me(ta.app, view.secret), 401, 'unauthorized');
    assert.equal((await me(ta.app, pu.key)).statusCode, 200);

    // Disabled: the session and the remaining key stop at once; it cannot sign in.
    const off = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/traffic-providers/${provider}/users/${pu.id}`,
      payload: { status: 'disabled' },
    });
    assert.equal(off.json().status, 'disabled');
    expectProblem(await me(ta.app, pu.token), 401, 'unauthorized');
    expectProblem(await me(ta.app, pu.key), 401, 'unauthorized');
    await assert.rejects(login(ta.app, pu.email, pu.password));
  });

  test('a change written straight to the database holds from the next request (as from another process): user disabled, portal closed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const pu = await newPortalUser(ta, provider);
    for (const tk of [pu.token, pu.key]) assert.equal((await me(ta.app, tk)).statusCode, 200);
    await ta.db.updateTable('provider_users').set({ status: 'disabled' }).where('id', '=', pu.id).execute();
    for (const tk of [pu.token, pu.key]) expectProblem(await me(ta.app, tk), 401, 'unauthorized');
    await ta.db.updateTable('provider_users').set({ status: 'active' }).where('id', '=', pu.id).execute();
    for (const tk of [pu.token, pu.key]) assert.equal((await me(ta.app, tk)).statusCode, 200);
    await ta.db.updateTable('traffic_providers').set({ portal_enabled: 0 }).where('id', '=', provider).execute();
    for (const tk of [pu.token, pu.key]) expectProblem(await me(ta.app, tk), 401, 'unauthorized');
  });

  test('View as provider: read only, needs leads:view, audited as the operator', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const narrow = await newOperator(ta, ['traffic_providers:edit']);
    const refused = await call(ta.app, narrow.token, {
      method: 'POST',
      url: `/api/traffic-providers/${provider}/view-as`,
    });
    assert.match(expectProblem(refused, 403, 'forbidden').detail, /leads:view/);
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${provider}/view-as`,
    });
    assert.equal(res.statusCode, 201, res.body);
    const who = await me(ta.app, res.json().token);
    assert.equal(who.statusCode, 200, who.body);
    assert.equal(who.json().view_as, true);
    assert.deepEqual(who.json().scopes, ['portal:view']);
    const write = await call(ta.app, res.json().token, {
      method: 'POST',
      url: '/api/portal/api-keys',
      payload: { name: 'x', scopes: ['portal:view'] },
    });
    expectProblem(write, 403, 'forbidden');
    const entry = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'actor_kind'])
      .where('action', '=', 'traffic_provider.viewed_as')
      .executeTakeFirstOrThrow();
    assert.deepEqual(entry, { actor_id: ta.ownerId, actor_kind: 'operator' });
  });

  test("portal tokens and invitations in a URL never reach the log (redacted like the operators' tokens)", async (t) => {
    const ta = await buildTestApp(t, engine);
    const pu = await newPortalUser(ta, await insertTrafficProvider(ta.db));
    const invite = '/portal/invitation';
    for (const secret of [pu.key, pu.token, `lgi_${pu.key.slice(5)}`]) {
      await call(ta.app, pu.token, {
        method: 'GET',
        url: `/api/portal/me?next=${encodeURIComponent(invite)}&x=${secret}`,
      });
      const logs = ta.logs.join('\n');
      assert.ok(logs.includes('x=[redacted]'), 'the query is logged, the token redacted');
      assert.ok(!logs.includes(secret.slice(6, 40)), `${secret.slice(0, 5)} token in a log line`);
    }
  });

  test('two-factor sign-in: enrolled from its own session, confirmed with a code, asked for at sign-in, off with the password', async (t) => {
    const ta = await buildTestApp(t, engine);
    const pu = await newPortalUser(ta, await insertTrafficProvider(ta.db));
    expectProblem(
      await call(ta.app, pu.key, { method: 'POST', url: '/api/portal/two-factor' }),
      403,
      'session_required',
    );
    const start = await call(ta.app, pu.token, { method: 'POST', url: '/api/portal/two-factor' });
    assert.equal(start.statusCode, 201, start.body);
    const { secret, otpauth_uri } = start.json();
    assert.match(otpauth_uri, /^otpauth:\/\/totp\//);
    const wrong = await call(ta.app, pu.token, {
      method: 'POST',
      url: '/api/portal/two-factor/confirm',
      payload: { code: totpAt(secret, Date.now()) === '123456' ? '654321' : '123456' },
    });
    assert.equal(expectProblem(wrong, 400, 'validation_failed').errors?.[0].field, 'code');
    const on = await call(ta.app, pu.token, {
      method: 'POST',
      url: '/api/portal/two-factor/confirm',
      payload: { code: totpAt(secret, Date.now()) },
    });
    assert.deepEqual(on.json(), { enabled: true });
    const noCode = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: pu.email, password: pu.password },
    });
    expectProblem(noCode, 401, 'totp_required');
    const users = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/traffic-providers/${(await me(ta.app, pu.token)).json().traffic_provider.id}/users`,
    });
    assert.equal(users.json().data[0].two_factor, true);
    const badOff = await call(ta.app, pu.token, {
      method: 'POST',
      url: '/api/portal/two-factor/disable',
      payload: { current_password: 'not-the-password' },
    });
    assert.equal(expectProblem(badOff, 400, 'validation_failed').errors?.[0].field, 'current_password');
    const off = await call(ta.app, pu.token, {
      method: 'POST',
      url: '/api/portal/two-factor/disable',
      payload: { current_password: pu.password },
    });
    assert.deepEqual(off.json(), { enabled: false });
    assert.equal(typeof (await login(ta.app, pu.email, pu.password)), 'string');
  });
});
