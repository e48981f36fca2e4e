import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newApiKey,
  newOperator,
  OWNER,
  type TestApp,
} from '../../../../test/helpers.js';

function fieldsOf(res: LightMyRequestResponse): string[] {
  const p = expectProblem(res, 400, 'validation_failed');
  assert.ok(Array.isArray(p.errors) && p.errors.length > 0);
  return p.errors!.map((e) => e.field);
}

const loginStatus = async (ta: TestApp, email: string, password: string) =>
  (await ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } })).statusCode;

const changePassword = (ta: TestApp, token: string, payload: Record<string, unknown>) =>
  call(ta.app, token, { method: 'POST', url: '/api/profile/password', payload });

forEachDatabase('profile', (engine) => {
  test('GET /api/profile shows the caller and what their role holds', async (t) => {
    const ta = await buildTestApp(t, engine);
    const owner = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' });
    assert.equal(owner.statusCode, 200);
    assert.equal(owner.json().operator.id, ta.ownerId);
    assert.equal(owner.json().operator.email, OWNER.email);
    assert.equal(owner.json().operator.role_name, 'admin');
    assert.ok(!/password/i.test(owner.body));
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    assert.deepEqual(owner.json().permissions, [...all].sort());

    const op = await newOperator(ta, ['roles:view', 'leads:view']);
    const mine = await call(ta.app, op.token, { method: 'GET', url: '/api/profile' });
    assert.equal(mine.statusCode, 200);
    assert.equal(mine.json().operator.id, op.id);
    assert.equal(mine.json().operator.email, op.email);
    assert.equal(mine.json().operator.role_id, op.roleId);
    assert.deepEqual(mine.json().permissions, ['leads:view', 'roles:view']);
    // It follows the role as it is now.
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${op.roleId}`,
      payload: { permissions: ['flows:view'] },
    });
    assert.deepEqual((await call(ta.app, op.token, { method: 'GET', url: '/api/profile' })).json().permissions, [
      'flows:view',
    ]);
  });

  test('PATCH /api/profile changes name and time zone, nothing else', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const res = await call(ta.app, op.token, {
      method: 'PATCH',
      url: '/api/profile',
      payload: { name: '  New Name ', timezone: 'Asia/Tokyo' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().operator.name, 'New Name');
    assert.equal(res.json().operator.timezone, 'Asia/Tokyo');
    assert.deepEqual(res.json().permissions, ['leads:view']);
    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'New Name');
    assert.equal(row.timezone, 'Asia/Tokyo');

    // Changing one field leaves the other as it was.
    const nameOnly = await call(ta.app, op.token, {
      method: 'PATCH',
      url: '/api/profile',
      payload: { name: 'Only Name' },
    });
    assert.equal(nameOnly.statusCode, 200);
    assert.equal(nameOnly.json().operator.timezone, 'Asia/Tokyo');
    const tzOnly = await call(ta.app, op.token, {
      method: 'PATCH',
      url: '/api/profile',
      payload: { timezone: 'Europe/Berlin' },
    });
    assert.equal(tzOnly.json().operator.name, 'Only Name');
    assert.equal(tzOnly.json().operator.timezone, 'Europe/Berlin');
    assert.deepEqual(
      (await call(ta.app, op.token, { method: 'GET', url: '/api/profile' })).json().operator,
      tzOnly.json().operator,
    );
  });

  test('PATCH /api/profile: bad time zone, empty body or other fields are 400, and nothing changes', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const patch = (payload: Record<string, unknown>) =>
      call(ta.app, op.token, { method: 'PATCH', url: '/api/profile', payload });
    assert.equal((await patch({ timezone: 'Europe/Paris' })).statusCode, 200);

    assert.deepEqual(fieldsOf(await patch({ timezone: 'Moon/Base' })), ['timezone']);
    assert.deepEqual(fieldsOf(await patch({ timezone: '' })), ['timezone']);
    expectProblem(await patch({}), 400, 'validation_failed');
    assert.deepEqual(fieldsOf(await patch({ name: '' })), ['name']);
    // Your own role or status are not yours to change here; the email needs your password.
    assert.deepEqual(fieldsOf(await patch({ role_id: 'x' })), ['role_id']);
    assert.deepEqual(fieldsOf(await patch({ status: 'disabled' })), ['status']);
    assert.deepEqual(fieldsOf(await patch({ email: 'new@example.test' })), ['current_password']);
    assert.deepEqual(fieldsOf(await patch({ email: 'not-an-email', current_password: op.password })), ['email']);

    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.equal(row.timezone, 'Europe/Paris');
    assert.equal(row.email, op.email);
    assert.equal(row.role_id, op.roleId);
    assert.equal(row.status, 'active');
    assert.ok(row.name.startsWith('Operator'));
  });

  test('PATCH /api/profile changes the email with the right current password; 409 when taken', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const patch = (payload: Record<string, unknown>) =>
      call(ta.app, op.token, { method: 'PATCH', url: '/api/profile', payload });

    assert.deepEqual(fieldsOf(await patch({ email: 'new@example.test', current_password: 'wrong-password' })), [
      'current_password',
    ]);
    expectProblem(await patch({ email: OWNER.email.toUpperCase(), current_password: op.password }), 409, 'conflict');
    // The same email (any case) is no change, so it needs no password.
    assert.equal((await patch({ email: op.email.toUpperCase(), name: 'Same Mail' })).statusCode, 200);
    assert.equal(await loginStatus(ta, op.email, op.password), 200);

    const res = await patch({ email: 'New.Address@Example.test', current_password: op.password });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().operator.email, 'new.address@example.test');
    assert.deepEqual(res.json().two_factor, { enabled: false, recovery_codes_left: 0 });
    assert.equal(await loginStatus(ta, 'new.address@example.test', op.password), 200);
    assert.equal(await loginStatus(ta, op.email, op.password), 401);
    const audit = await ta.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'profile.email_changed')
      .execute();
    assert.equal(audit.length, 1);
    assert.deepEqual(JSON.parse(audit[0].details), { from: op.email, to: 'new.address@example.test' });
    assert.ok(!audit[0].details.includes(op.password));
  });

  test('POST /api/profile/password: wrong current password or short new one is 400 naming the field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const before = (
      await ta.db.selectFrom('operators').select('password_hash').where('id', '=', op.id).executeTakeFirstOrThrow()
    ).password_hash;

    assert.deepEqual(
      fieldsOf(
        await changePassword(ta, op.token, { current_password: 'wrong-password', new_password: 'long-enough-new' }),
      ),
      ['current_password'],
    );
    assert.deepEqual(
      fieldsOf(await changePassword(ta, op.token, { current_password: op.password, new_password: 'short' })),
      ['new_password'],
    );
    assert.deepEqual(fieldsOf(await changePassword(ta, op.token, { new_password: 'long-enough-new' })), [
      'current_password',
    ]);
    assert.deepEqual(fieldsOf(await changePassword(ta, op.token, { current_password: op.password })), ['new_password']);

    const after = (
      await ta.db.selectFrom('operators').select('password_hash').where('id', '=', op.id).executeTakeFirstOrThrow()
    ).password_hash;
    assert.equal(after, before);
    assert.equal(await loginStatus(ta, op.email, op.password), 200);
  });

  test('POST /api/profile/password: 204; this session stays, the others end, only the new password logs in', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const other = await login(ta.app, op.email, op.password);
    const key = await newApiKey(ta, ['leads:view'], { token: op.token });

    const res = await changePassword(ta, op.token, {
      current_password: op.password,
      new_password: 'my-new-password-1',
    });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');

    assert.equal(
      (await call(ta.app, op.token, { method: 'GET', url: '/api/profile' })).statusCode,
      200,
      'this session still works',
    );
    expectProblem(await call(ta.app, other, { method: 'GET', url: '/api/profile' }), 401, 'unauthorized');
    assert.equal(await loginStatus(ta, op.email, op.password), 401);
    const fresh = await login(ta.app, op.email, 'my-new-password-1');
    assert.equal((await call(ta.app, fresh, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    // Nobody else's sessions are touched.
    assert.equal((await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    // The key is not a session; it keeps working.
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' })).statusCode, 200);
    const row = await ta.db
      .selectFrom('operators')
      .select('password_hash')
      .where('id', '=', op.id)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash, /^\$argon2id\$/);
    assert.ok(!row.password_hash.includes('my-new-password-1'));
  });

  test('wrong current_password guesses (password or email change) count toward the login limit, also when racing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2
          ? changePassword(ta, op.token, { current_password: `guess-${i}`, new_password: 'stolen-session-pw' })
          : call(ta.app, op.token, {
              method: 'PATCH',
              url: '/api/profile',
              payload: { email: `thief-${i}@example.test`, current_password: `guess-${i}` },
            }),
      ),
    );
    const judged = answers.filter((r) => r.statusCode === 400).length;
    const limited = answers.filter((r) => r.statusCode === 429).length;
    assert.ok(judged <= 5, `judged ${judged}, limited ${limited}`);
    assert.equal(judged + limited, 20);
    for (const r of answers.filter((a) => a.statusCode === 400)) assert.deepEqual(fieldsOf(r), ['current_password']);
    for (let i = judged; i < 5; i++)
      fieldsOf(
        await changePassword(ta, op.token, { current_password: `late-${i}`, new_password: 'stolen-session-pw' }),
      );
    // Out of budget: the right password is not looked at, here or at login.
    expectProblem(
      await changePassword(ta, op.token, { current_password: op.password, new_password: 'stolen-session-pw' }),
      429,
      'rate_limited',
    );
    assert.equal(await loginStatus(ta, op.email, op.password), 429);
    const row = await ta.db.selectFrom('operators').select('email').where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.equal(row.email, op.email);
    const failed = await ta.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'auth.reauth_failed')
      .execute();
    assert.equal(failed.length, 5);
    assert.ok(failed.every((f) => !f.details.includes('guess-') && !f.details.includes('late-')));
  });

  test('session only: a key gets 403 session_required; no credential gets 401', async (t) => {
    const ta = await buildTestApp(t, engine);
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    const key = await newApiKey(ta, all);
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/profile' }), 403, 'session_required');
    expectProblem(
      await call(ta.app, key.secret, {
        method: 'POST',
        url: '/api/profile/password',
        payload: { current_password: OWNER.password, new_password: 'key-chosen-password' },
      }),
      403,
      'session_required',
    );
    assert.equal(await loginStatus(ta, OWNER.email, OWNER.password), 200);

    for (const r of [
      { method: 'GET', url: '/api/profile' },
      { method: 'PATCH', url: '/api/profile', payload: { name: 'x' } },
      {
        method: 'POST',
        url: '/api/profile/password',
        payload: { current_password: 'a', new_password: 'long-enough-1' },
      },
    ] as const) {
      const res = await call(ta.app, null, { ...r });
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
  });
});
