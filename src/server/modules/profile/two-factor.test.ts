import assert from 'node:assert/strict';
import { test } from 'node:test';
import { totpAt } from '../../auth/totp.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { unseal } from '../../secrets/box.js';

type Op = Awaited<ReturnType<typeof newOperator>>;

const post = (ta: TestApp, token: string | null, url: string, payload?: Record<string, unknown>) =>
  call(ta.app, token, { method: 'POST', url, ...(payload ? { payload } : {}) });

const loginWith = (ta: TestApp, op: Op, extra: Record<string, unknown> = {}) =>
  ta.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: op.email, password: op.password, ...extra },
  });

/** The code for `offset` steps from now (±1 is inside the accepted window). */
const codeAt = (secret: string, offset = 0) => totpAt(secret, Date.now() + offset * 30_000);

/** Turns 2FA on for `op`; returns the secret and the recovery codes. Uses the current step. */
async function enrol(ta: TestApp, op: Op) {
  const started = await post(ta, op.token, '/api/profile/2fa/enrol');
  assert.equal(started.statusCode, 200, started.body);
  const { secret } = started.json();
  const confirmed = await post(ta, op.token, '/api/profile/2fa/confirm', { code: codeAt(secret) });
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  return { secret: secret as string, recovery: confirmed.json().recovery_codes as string[] };
}

/** A well-formed code that no step near now produces. */
const wrongCode = (secret: string) =>
  ['000000', '111111', '222222'].find((c) => ![-1, 0, 1, 2].some((o) => codeAt(secret, o) === c))!;

const twoFactorOf = async (ta: TestApp, op: Op) =>
  (await call(ta.app, op.token, { method: 'GET', url: '/api/profile' })).json().two_factor;

forEachDatabase('two-factor sign-in', (engine) => {
  test('enrol → confirm: secret, URI and QR; nothing changes until a right code; ten recovery codes stored hashed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: false, recovery_codes_left: 0 });

    const res = await post(ta, op.token, '/api/profile/2fa/enrol');
    assert.equal(res.statusCode, 200, res.body);
    const { secret, otpauth_uri, qr } = res.json();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(otpauth_uri);
    assert.equal(uri.searchParams.get('secret'), secret);
    assert.ok(decodeURIComponent(uri.pathname).endsWith(op.email));
    assert.match(qr, /^data:image\/svg\+xml;base64,/);
    assert.match(Buffer.from(qr.split(',')[1], 'base64').toString(), /^<svg[\s\S]*<\/svg>\s*$/);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: false, recovery_codes_left: 0 }, 'pending only');
    assert.equal((await loginWith(ta, op)).statusCode, 200, 'sign-in unchanged while pending');

    // A second enrolment replaces the pending secret: a code from the first no longer confirms.
    const second = (await post(ta, op.token, '/api/profile/2fa/enrol')).json().secret;
    assert.notEqual(second, secret);
    const stale = await post(ta, op.token, '/api/profile/2fa/confirm', { code: codeAt(secret) });
    assert.deepEqual(
      expectProblem(stale, 400, 'validation_failed').errors!.map((e) => e.field),
      ['code'],
    );
    expectProblem(
      await post(ta, op.token, '/api/profile/2fa/confirm', { code: 'x'.repeat(33) }),
      400,
      'validation_failed',
    );

    const ok = await post(ta, op.token, '/api/profile/2fa/confirm', { code: codeAt(second) });
    assert.equal(ok.statusCode, 200, ok.body);
    const codes: string[] = ok.json().recovery_codes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const c of codes) assert.match(c, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: true, recovery_codes_left: 10 });

    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.ok(!row.totp_secret!.includes(second), 'the seed is sealed at rest');
    assert.equal(unseal(row.totp_secret!, 'totp-seed'), second);
    assert.equal(row.totp_pending_secret, null);
    const stored = await ta.db.selectFrom('recovery_codes').selectAll().where('operator_id', '=', op.id).execute();
    assert.equal(stored.length, 10);
    for (const s of stored) {
      assert.match(s.code_hash, /^[0-9a-f]{64}$/);
      assert.ok(!codes.some((c) => s.code_hash.includes(c.replace('-', ''))));
    }
    const audit = await ta.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('actor_id', '=', op.id)
      .execute();
    assert.ok(audit.some((a) => a.action === 'profile.2fa_enabled'));
    assert.ok(!JSON.stringify(audit).includes(codes[0]) && !JSON.stringify(audit).includes(second));
    assert.ok(
      !ta.logs.join('').includes(codes[0]) && !ta.logs.join('').includes(second),
      'neither codes nor seed are logged',
    );

    // While on: no new enrolment, nothing to confirm.
    expectProblem(await post(ta, op.token, '/api/profile/2fa/enrol'), 409, 'conflict');
    expectProblem(await post(ta, op.token, '/api/profile/2fa/confirm', { code: codeAt(second, 1) }), 409, 'conflict');
  });

  test('login: totp_required without a code, password checked first, a code signs in once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret } = await enrol(ta, op);

    const noCode = await loginWith(ta, op);
    assert.equal(expectProblem(noCode, 401, 'totp_required').detail.includes('code'), true);
    // A wrong password is the same 401 as ever, code or no code: nothing says 2FA is on.
    const wrongPw = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: op.email, password: 'wrong-password', totp_code: codeAt(secret, 1) },
    });
    assert.equal(expectProblem(wrongPw, 401, 'unauthorized').detail, 'Wrong email or password.');

    // The confirming code's step is spent already.
    expectProblem(await loginWith(ta, op, { totp_code: codeAt(secret) }), 401, 'unauthorized');
    expectProblem(await loginWith(ta, op, { totp_code: wrongCode(secret) }), 401, 'unauthorized');

    const next = codeAt(secret, 1);
    const ok = await loginWith(ta, op, { totp_code: next });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(Object.keys(ok.json()).sort(), ['expires_at', 'kind', 'operator', 'token']);
    assert.equal(ok.json().operator.id, op.id);
    assert.equal((await call(ta.app, ok.json().token, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    expectProblem(await loginWith(ta, op, { totp_code: next }), 401, 'unauthorized'); // replay

    const failed = await ta.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', '=', 'auth.totp_failed')
      .execute();
    assert.equal(failed.length, 3);
    assert.ok(!JSON.stringify(failed).includes(next));

    // Malformed input names the field.
    const fields = async (extra: Record<string, unknown>) =>
      expectProblem(await loginWith(ta, op, extra), 400, 'validation_failed').errors!.map((e) => e.field);
    assert.deepEqual(await fields({ totp_code: '12345' }), ['totp_code']);
    assert.deepEqual(await fields({ totp_code: 'abcdef' }), ['totp_code']);
    assert.deepEqual(await fields({ totp_code: '123456', recovery_code: 'abcde-fghij' }), ['recovery_code']);
    assert.deepEqual(await fields({ recovery_code: '' }), ['recovery_code']);
  });

  test('wrong codes count toward the login rate limit; a right password alone does not reset it', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret } = await enrol(ta, op);
    const wrong = wrongCode(secret);
    for (let i = 0; i < 5; i++) {
      expectProblem(await loginWith(ta, op), 401, 'totp_required');
      expectProblem(await loginWith(ta, op, { totp_code: wrong }), 401, 'unauthorized');
    }
    const limited = await loginWith(ta, op, { totp_code: codeAt(secret, 1) });
    expectProblem(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal(
      Number(
        (
          await ta.db
            .selectFrom('login_failures')
            .select((eb) => eb.fn.countAll<string | number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
      5,
    );
  });

  test('30 concurrent wrong codes with the right password: at most 5 are judged, TOTP and recovery codes sharing the budget', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret } = await enrol(ta, op);
    const wrong = wrongCode(secret);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ta.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: {
            email: op.email,
            password: op.password,
            ...(i % 2 ? { totp_code: wrong } : { recovery_code: `aaaaa-aaaa${'abcdefghijklmnopqrstuvwxyz234567'[i]}` }),
          },
          remoteAddress: `10.4.0.${i + 1}`,
        }),
      ),
    );
    const judged = answers.filter((r) => r.statusCode === 401).length;
    const limited = answers.filter((r) => r.statusCode === 429).length;
    assert.ok(judged <= 5, `judged ${judged}, limited ${limited}`);
    assert.equal(judged + limited, 30);
    for (const r of answers) expectProblem(r, r.statusCode, r.statusCode === 429 ? 'rate_limited' : 'unauthorized');
    // What budget is left is exactly what was not judged; then the right code is not even looked at.
    for (let i = judged; i < 5; i++) expectProblem(await loginWith(ta, op, { totp_code: wrong }), 401, 'unauthorized');
    expectProblem(await loginWith(ta, op, { totp_code: codeAt(secret, 1) }), 429, 'rate_limited');
  });

  test('concurrent wrong codes on /api/profile/2fa/disable: at most 5 are judged, the rest 429', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret } = await enrol(ta, op);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(ta, op.token, '/api/profile/2fa/disable', { code: wrongCode(secret) })),
    );
    const judged = answers.filter((r) => r.statusCode === 400).length;
    const limited = answers.filter((r) => r.statusCode === 429).length;
    assert.ok(judged <= 5, `judged ${judged}, limited ${limited}`);
    assert.equal(judged + limited, 20);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: true, recovery_codes_left: 10 });
  });

  test('a recovery code signs in once, in any case and spacing, and the count goes down', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { recovery } = await enrol(ta, op);
    const ok = await loginWith(ta, op, { recovery_code: ` ${recovery[3].toUpperCase().replace('-', ' ')} ` });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: true, recovery_codes_left: 9 });
    expectProblem(await loginWith(ta, op, { recovery_code: recovery[3] }), 401, 'unauthorized');
    expectProblem(await loginWith(ta, op, { recovery_code: 'aaaaa-aaaaa' }), 401, 'unauthorized');
    const used = await ta.db
      .selectFrom('recovery_codes')
      .select('used_at')
      .where('operator_id', '=', op.id)
      .where('used_at', 'is not', null)
      .execute();
    assert.equal(used.length, 1);
    // Another operator's code is not yours.
    const other = await newOperator(ta, ['leads:view']);
    const theirs = await enrol(ta, other);
    expectProblem(await loginWith(ta, op, { recovery_code: theirs.recovery[0] }), 401, 'unauthorized');
  });

  test('disable needs a right code (TOTP or recovery); wrong ones count toward 429; off means password only', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret, recovery } = await enrol(ta, op);
    const wrong = wrongCode(secret);

    const bad = await post(ta, op.token, '/api/profile/2fa/disable', { code: wrong });
    assert.deepEqual(expectProblem(bad, 400, 'validation_failed').errors, [
      { field: 'code', message: 'is wrong or already used' },
    ]);
    expectProblem(
      await post(ta, op.token, '/api/profile/2fa/disable', { code: 'zzzzz-zzzzz' }),
      400,
      'validation_failed',
    );
    expectProblem(await post(ta, op.token, '/api/profile/2fa/disable', {}), 400, 'validation_failed');
    assert.equal((await twoFactorOf(ta, op)).enabled, true);

    const res = await post(ta, op.token, '/api/profile/2fa/disable', { code: recovery[0] });
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: false, recovery_codes_left: 0 });
    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.totp_secret, row.totp_pending_secret, row.totp_last_step], [null, null, null]);
    assert.equal(
      (await ta.db.selectFrom('recovery_codes').select('id').where('operator_id', '=', op.id).execute()).length,
      0,
    );
    assert.equal((await loginWith(ta, op)).statusCode, 200);
    expectProblem(await post(ta, op.token, '/api/profile/2fa/disable', { code: codeAt(secret, 1) }), 409, 'conflict');
    assert.ok(
      (await ta.db.selectFrom('audit_log').select('action').where('action', '=', 'profile.2fa_disabled').execute())
        .length === 1,
    );

    // Re-enrol, then a TOTP code disables; guessing on this route is rate-limited like login.
    const again = await enrol(ta, op);
    for (let i = 0; i < 5; i++)
      expectProblem(
        await post(ta, op.token, '/api/profile/2fa/disable', { code: wrongCode(again.secret) }),
        400,
        'validation_failed',
      );
    expectProblem(
      await post(ta, op.token, '/api/profile/2fa/disable', { code: codeAt(again.secret, 1) }),
      429,
      'rate_limited',
    );
    await ta.db.deleteFrom('login_failures').execute();
    assert.equal(
      (await post(ta, op.token, '/api/profile/2fa/disable', { code: codeAt(again.secret, 1) })).statusCode,
      204,
    );
  });

  test('recovery codes can be replaced with a code; the old ones stop working', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const { secret, recovery } = await enrol(ta, op);
    await loginWith(ta, op, { recovery_code: recovery[0] });
    const res = await post(ta, op.token, '/api/profile/2fa/recovery-codes', { code: codeAt(secret, 1) });
    assert.equal(res.statusCode, 200, res.body);
    const fresh: string[] = res.json().recovery_codes;
    assert.equal(fresh.length, 10);
    assert.ok(!fresh.some((c) => recovery.includes(c)));
    assert.deepEqual(await twoFactorOf(ta, op), { enabled: true, recovery_codes_left: 10 });
    expectProblem(await loginWith(ta, op, { recovery_code: recovery[1] }), 401, 'unauthorized');
    assert.equal((await loginWith(ta, op, { recovery_code: fresh[1] })).statusCode, 200);
  });

  test('session only: keys get 403 session_required on every 2FA route; no credential 401', async (t) => {
    const ta = await buildTestApp(t, engine);
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    const key = await newApiKey(ta, all);
    for (const url of [
      '/api/profile/2fa/enrol',
      '/api/profile/2fa/confirm',
      '/api/profile/2fa/disable',
      '/api/profile/2fa/recovery-codes',
    ]) {
      const payload = url.endsWith('enrol') ? undefined : { code: '123456' };
      expectProblem(await post(ta, key.secret, url, payload), 403, 'session_required');
      expectProblem(await post(ta, null, url, payload), 401, 'unauthorized');
    }
    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', ta.ownerId).executeTakeFirstOrThrow();
    assert.equal(row.totp_pending_secret, null, 'the key started no enrolment');
  });

  test("an operator with operators:edit turns off another's two-factor sign-in (lost device), never their own", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    await enrol(ta, op);
    const get = async () =>
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${op.id}` })).json();
    assert.equal((await get()).two_factor, true, 'the operator resource says 2FA is on (a boolean)');
    assert.equal((await loginWith(ta, op)).statusCode, 401, 'a code is needed');

    const manager = await newOperator(ta, ['operators:view', 'operators:edit', 'leads:view']);
    const patch = (token: string, id: string) =>
      call(ta.app, token, {
        method: 'PATCH',
        url: `/api/operators/${id}`,
        payload: { two_factor: false, current_password: manager.password },
      });
    expectProblem(await patch(manager.token, manager.id), 409, 'conflict'); // not for yourself
    expectProblem(
      await call(ta.app, manager.token, {
        method: 'PATCH',
        url: `/api/operators/${op.id}`,
        payload: { two_factor: true },
      }),
      400,
      'validation_failed',
    );
    const viewer = await newOperator(ta, ['operators:view', 'leads:view']);
    expectProblem(await patch(viewer.token, op.id), 403, 'forbidden');

    const res = await patch(manager.token, op.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().two_factor, false);
    assert.equal((await get()).two_factor, false);
    assert.equal((await loginWith(ta, op)).statusCode, 200, 'password alone signs in again');
    const left = await ta.db.selectFrom('recovery_codes').select('id').where('operator_id', '=', op.id).execute();
    assert.equal(left.length, 0, 'the old recovery codes are gone');
    const row = await ta.db
      .selectFrom('operators')
      .select(['totp_secret', 'totp_pending_secret'])
      .where('id', '=', op.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { totp_secret: null, totp_pending_secret: null });
  });
});
