// The account IP allow-list: its settings endpoints, and its enforcement on every /api route
// for sessions and keys alike (contract §1.8, §1.9, §2 Security settings).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { InjectOptions } from 'fastify';
import {
  OWNER,
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

const URL = '/api/settings/security';

/** The allow-list as stored in the database (undefined: never saved). */
async function storedList(ta: TestApp): Promise<string[] | undefined> {
  const row = await ta.db.selectFrom('settings').select('value').where('key', '=', 'ip_allowlist').executeTakeFirst();
  return row ? JSON.parse(row.value) : undefined;
}

/** PUT the allow-list with the owner's session, from `from` (inject's default is 127.0.0.1). */
function putList(ta: TestApp, list: string[], from?: string, extra: Partial<InjectOptions> = {}) {
  return call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: URL,
    payload: { ip_allowlist: list },
    ...(from ? { remoteAddress: from } : {}),
    ...extra,
  });
}

/** A real HTTP request over TCP, from the given local (client) address. */
function realRequest(
  port: number,
  localAddress: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, localAddress, path, method: 'GET', headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: JSON.parse(text),
            contentType: String(res.headers['content-type']),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

forEachDatabase('security settings', (engine) => {
  test('GET/PUT are session-only and need settings:view / settings:edit', async (t) => {
    const ta = await buildTestApp(t, engine);

    const get = await call(ta.app, ta.ownerToken, { method: 'GET', url: URL });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(get.json(), { ip_allowlist: [], your_ip: '127.0.0.1' });

    expectProblem(await call(ta.app, null, { method: 'GET', url: URL }), 401, 'unauthorized');
    expectProblem(
      await call(ta.app, null, { method: 'PUT', url: URL, payload: { ip_allowlist: [] } }),
      401,
      'unauthorized',
    );

    // Even the owner's key with both scopes cannot read or widen the list.
    const key = await newApiKey(ta, ['settings:view', 'settings:edit']);
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: URL }), 403, 'session_required');
    expectProblem(
      await call(ta.app, key.secret, { method: 'PUT', url: URL, payload: { ip_allowlist: ['0.0.0.0/0'] } }),
      403,
      'session_required',
    );

    const nobody = await newOperator(ta, ['roles:view']);
    expectProblem(await call(ta.app, nobody.token, { method: 'GET', url: URL }), 403, 'forbidden');
    expectProblem(
      await call(ta.app, nobody.token, { method: 'PUT', url: URL, payload: { ip_allowlist: ['127.0.0.1'] } }),
      403,
      'forbidden',
    );

    const viewer = await newOperator(ta, ['settings:view']);
    assert.equal((await call(ta.app, viewer.token, { method: 'GET', url: URL })).statusCode, 200);
    expectProblem(
      await call(ta.app, viewer.token, { method: 'PUT', url: URL, payload: { ip_allowlist: ['127.0.0.1'] } }),
      403,
      'forbidden',
    );
    assert.equal(await storedList(ta), undefined, 'no refused PUT stored anything');

    const editor = await newOperator(ta, ['settings:view', 'settings:edit']);
    const put = await call(ta.app, editor.token, { method: 'PUT', url: URL, payload: { ip_allowlist: ['127.0.0.1'] } });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(await storedList(ta), ['127.0.0.1/32']);
  });

  test('PUT normalises and dedupes entries, takes IPv6, and is audited', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await putList(ta, [
      '127.0.0.1',
      '127.0.0.1/32',
      ' 10.0.0.0/8 ',
      '2001:DB8::/32',
      '2001:db8::/32',
      '::1',
      'fe80::/10',
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const expected = ['127.0.0.1/32', '10.0.0.0/8', '2001:db8::/32', '::1/128', 'fe80::/10'];
    assert.deepEqual(res.json(), { ip_allowlist: expected });
    assert.deepEqual(await storedList(ta), expected);
    const get = await call(ta.app, ta.ownerToken, { method: 'GET', url: URL });
    assert.deepEqual(get.json(), { ip_allowlist: expected, your_ip: '127.0.0.1' });

    const entry = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'via', 'ip', 'details'])
      .where('action', '=', 'settings.ip_allowlist_updated')
      .executeTakeFirstOrThrow();
    assert.equal(entry.actor_id, ta.ownerId);
    assert.equal(entry.via, 'session');
    assert.equal(entry.ip, '127.0.0.1');
    assert.deepEqual(JSON.parse(entry.details), { before: [], after: expected });
  });

  test('a bad entry is refused with 400 naming ip_allowlist[i], and nothing is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    assert.equal((await putList(ta, ['127.0.0.1'])).statusCode, 200);

    const res = await putList(ta, ['127.0.0.1', 'not-an-ip', '10.0.0.0/8', '10.0.0.0/33', '1.2.3.4/8/8']);
    const body = expectProblem(res, 400, 'validation_failed');
    assert.deepEqual(
      body.errors!.map((e) => e.field),
      ['ip_allowlist[1]', 'ip_allowlist[3]', 'ip_allowlist[4]'],
    );
    assert.ok(body.errors![0].message.includes('not-an-ip'));
    assert.deepEqual(await storedList(ta), ['127.0.0.1/32'], 'the earlier list is untouched');

    // Not a list of strings at all: schema validation, also 400.
    expectProblem(await putList(ta, [42 as unknown as string]), 400, 'validation_failed');
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'PUT', url: URL, payload: {} }),
      400,
      'validation_failed',
    );
    assert.deepEqual(await storedList(ta), ['127.0.0.1/32']);
    const audits = await ta.db
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'settings.ip_allowlist_updated')
      .execute();
    assert.equal(audits.length, 1, 'only the accepted PUT is audited');
  });

  test("a list that would block the caller's own address is refused with 409, and nothing is stored", async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await putList(ta, ['10.0.0.0/8', '2001:db8::/32']);
    const body = expectProblem(res, 409, 'conflict');
    assert.ok(body.detail.includes('127.0.0.1'), body.detail);
    assert.equal(await storedList(ta), undefined);

    // The caller's address decides: the same list from inside it is accepted.
    assert.equal((await putList(ta, ['10.0.0.0/8'], '10.20.30.40')).statusCode, 200);
    assert.deepEqual(await storedList(ta), ['10.0.0.0/8']);

    // A caller allowed now cannot save a list that leaves itself out either.
    expectProblem(await putList(ta, ['10.0.0.0/16'], '10.20.30.40'), 409, 'conflict');
    assert.deepEqual(await storedList(ta), ['10.0.0.0/8']);
  });

  test('with a list in force, a blocked address gets 403 ip_not_allowed everywhere but /api/health', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['roles:view']);
    const IN = '10.1.2.3';
    const OUT = '192.0.2.77';
    assert.equal((await putList(ta, ['10.0.0.0/8'], IN)).statusCode, 200);

    const from = (remoteAddress: string, token: string | null, opts: InjectOptions) =>
      call(ta.app, token, { ...opts, remoteAddress });

    // Blocked: sessions, keys, login, the schema, unknown routes, even the settings.
    expectProblem(await from(OUT, ta.ownerToken, { method: 'GET', url: '/api/roles' }), 403, 'ip_not_allowed');
    expectProblem(await from(OUT, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami' }), 403, 'ip_not_allowed');
    expectProblem(
      await from(OUT, ta.ownerToken, { method: 'PUT', url: URL, payload: { ip_allowlist: [] } }),
      403,
      'ip_not_allowed',
    );
    expectProblem(await from(OUT, key.secret, { method: 'GET', url: '/api/roles' }), 403, 'ip_not_allowed');
    expectProblem(await from(OUT, null, { method: 'GET', url: '/api/openapi.json' }), 403, 'ip_not_allowed');
    expectProblem(await from(OUT, null, { method: 'GET', url: '/api/no-such-route' }), 403, 'ip_not_allowed');

    const sessionsBefore = (await ta.db.selectFrom('sessions').select('id').execute()).length;
    const refusedLogin = await from(OUT, null, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: OWNER.email, password: OWNER.password },
    });
    expectProblem(refusedLogin, 403, 'ip_not_allowed');
    assert.equal(
      (await ta.db.selectFrom('sessions').select('id').execute()).length,
      sessionsBefore,
      'no session was made',
    );
    assert.deepEqual(await storedList(ta), ['10.0.0.0/8'], 'the blocked PUT changed nothing');

    // Exempt: health.
    const health = await from(OUT, null, { method: 'GET', url: '/api/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.json().status, 'ok');

    // The same requests from inside the list go through.
    assert.equal((await from(IN, ta.ownerToken, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await from(IN, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await from(IN, null, { method: 'GET', url: '/api/openapi.json' })).statusCode, 200);
    expectProblem(await from(IN, null, { method: 'GET', url: '/api/no-such-route' }), 404, 'not_found');
    expectProblem(await from(IN, null, { method: 'GET', url: '/api/roles' }), 401, 'unauthorized');
    const okLogin = await from(IN, null, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: OWNER.email, password: OWNER.password },
    });
    assert.equal(okLogin.statusCode, 200, okLogin.body);

    // An empty list allows everyone again.
    const cleared = await putList(ta, [], IN);
    assert.equal(cleared.statusCode, 200);
    assert.deepEqual(cleared.json(), { ip_allowlist: [] });
    assert.deepEqual(await storedList(ta), []);
    assert.equal((await from(OUT, ta.ownerToken, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await from(OUT, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await from(OUT, null, { method: 'GET', url: '/api/openapi.json' })).statusCode, 200);
  });

  test('IPv6 callers: ::1/128 lets ::1 in; an IPv4-mapped caller is its IPv4 address', async (t) => {
    const ta = await buildTestApp(t, engine);
    const whoami = (remoteAddress: string) =>
      call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami', remoteAddress });

    // From 127.0.0.1 this list would lock the caller out; from ::1 it is fine.
    expectProblem(await putList(ta, ['::1/128']), 409, 'conflict');
    assert.equal((await putList(ta, ['::1/128'], '::1')).statusCode, 200);
    assert.equal((await whoami('::1')).statusCode, 200);
    expectProblem(await whoami('127.0.0.1'), 403, 'ip_not_allowed');
    expectProblem(await whoami('::2'), 403, 'ip_not_allowed');
    expectProblem(await whoami('::ffff:127.0.0.1'), 403, 'ip_not_allowed');

    assert.equal((await putList(ta, [], '::1')).statusCode, 200);

    // A dual-stack socket reports ::ffff:127.0.0.1 for an IPv4 client: that is 127.0.0.1, so
    // this list does not lock it out (no 409).
    const put = await putList(ta, ['127.0.0.1/32'], '::ffff:127.0.0.1');
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((await whoami('::ffff:127.0.0.1')).statusCode, 200);
    assert.equal((await whoami('127.0.0.1')).statusCode, 200);
    expectProblem(await whoami('::ffff:127.0.0.2'), 403, 'ip_not_allowed');
    expectProblem(await whoami('::1'), 403, 'ip_not_allowed');
    // And a mapped caller outside a v4 list is refused a list that leaves it out.
    expectProblem(await putList(ta, ['10.0.0.0/8'], '::ffff:127.0.0.1'), 409, 'conflict');
    assert.deepEqual(await storedList(ta), ['127.0.0.1/32']);
  });

  test('real sockets: a client bound to 127.0.0.2 is refused, 127.0.0.1 is let in', async (t) => {
    const ta = await buildTestApp(t, engine);
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = ta.app.server.address() as AddressInfo;
    const auth = { authorization: `Bearer ${ta.ownerToken}` };

    // Before any list: both loopback addresses get in (so the refusal below is the list's doing).
    assert.equal((await realRequest(port, '127.0.0.2', '/api/auth/whoami', auth)).status, 200);

    assert.equal((await putList(ta, ['127.0.0.1/32'])).statusCode, 200);

    const blocked = await realRequest(port, '127.0.0.2', '/api/auth/whoami', auth);
    assert.equal(blocked.status, 403);
    assert.ok(blocked.contentType.startsWith('application/problem+json'));
    assert.equal(blocked.body.code, 'ip_not_allowed');
    assert.ok(blocked.body.detail.includes('127.0.0.2'), blocked.body.detail);

    const allowed = await realRequest(port, '127.0.0.1', '/api/auth/whoami', auth);
    assert.equal(allowed.status, 200);
    assert.equal(allowed.body.operator.email, OWNER.email);
    assert.equal(allowed.body.via, 'session');

    const health = await realRequest(port, '127.0.0.2', '/api/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
  });

  test('TRUST_PROXY: X-Forwarded-For from a trusted proxy decides the client address', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { TRUST_PROXY: '127.0.0.1' } });
    const whoami = (remoteAddress: string, xff?: string) =>
      call(ta.app, ta.ownerToken, {
        method: 'GET',
        url: '/api/auth/whoami',
        remoteAddress,
        ...(xff ? { headers: { 'x-forwarded-for': xff } } : {}),
      });

    // The proxy itself is allowed; so is 10/8 behind it.
    assert.equal((await putList(ta, ['127.0.0.1/32', '10.0.0.0/8'])).statusCode, 200);

    // Through the trusted proxy the forwarded address counts, even though the socket is allowed.
    expectProblem(await whoami('127.0.0.1', '203.0.113.9'), 403, 'ip_not_allowed');
    assert.equal((await whoami('127.0.0.1', '10.9.8.7')).statusCode, 200);
    assert.equal((await whoami('127.0.0.1')).statusCode, 200, 'no header: the socket address');
    // Only the hop the trusted proxy saw counts, not a forged entry further left.
    expectProblem(await whoami('127.0.0.1', '10.9.8.7, 203.0.113.9'), 403, 'ip_not_allowed');
    // An untrusted peer cannot claim an allowed address.
    expectProblem(await whoami('192.0.2.50', '10.9.8.7'), 403, 'ip_not_allowed');

    // GET tells the caller the address the list must include: the forwarded one.
    const settings = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: URL,
      headers: { 'x-forwarded-for': '10.9.8.7' },
    });
    assert.equal(settings.json().your_ip, '10.9.8.7');

    // The 409 self-lock-out check sees the forwarded address too.
    expectProblem(
      await putList(ta, ['127.0.0.1/32'], '127.0.0.1', { headers: { 'x-forwarded-for': '10.9.8.7' } }),
      409,
      'conflict',
    );
    assert.deepEqual(await storedList(ta), ['127.0.0.1/32', '10.0.0.0/8']);
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored', async (t) => {
    const ta = await buildTestApp(t, engine);
    assert.equal((await putList(ta, ['10.0.0.0/8'], '10.1.1.1')).statusCode, 200);
    const forged = { 'x-forwarded-for': '10.1.1.1' };

    expectProblem(
      await call(ta.app, ta.ownerToken, {
        method: 'GET',
        url: '/api/auth/whoami',
        remoteAddress: '192.0.2.50',
        headers: forged,
      }),
      403,
      'ip_not_allowed',
    );
    expectProblem(
      await call(ta.app, null, {
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '127.0.0.1',
        headers: forged,
        payload: { email: OWNER.email, password: OWNER.password },
      }),
      403,
      'ip_not_allowed',
    );
    // The header cannot take an allowed socket address out either.
    const ok = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: '/api/auth/whoami',
      remoteAddress: '10.1.1.1',
      headers: { 'x-forwarded-for': '192.0.2.50' },
    });
    assert.equal(ok.statusCode, 200, 'an allowed socket is not blocked by a forwarded header either');
  });
});
