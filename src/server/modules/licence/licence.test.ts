// The licence panel: offline Ed25519 verification, refusals that leave the licence in force,
// status over time, installation binding, and the vendor script run as a real child process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type Engine,
  type TestApp,
} from '../../../../test/helpers.js';
import { ConfigError, loadConfig } from '../../config.js';
import { signLicence, type LicencePayload } from './format.js';
import { installationId, saveLicence } from './service.js';

const URL = '/api/licence';
const DAY = 86_400_000;
const run = promisify(execFile);

const vendor = generateKeyPairSync('ed25519');
const PUBLIC_B64 = vendor.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

function licence(over: Partial<LicencePayload> = {}, key: KeyObject = vendor.privateKey): string {
  const now = Date.now();
  return signLicence(
    {
      v: 1,
      licence_id: randomUUID(),
      holder: 'Acme GmbH',
      plan: 'pro',
      limits: { operators: 10, leads_per_month: 50_000 },
      issued_at: new Date(now - 10 * DAY).toISOString(),
      expires_at: new Date(now + 365 * DAY).toISOString(),
      ...over,
    },
    key,
  );
}

const app = (t: Parameters<typeof buildTestApp>[0], engine: Engine, env: Record<string, string> = {}) =>
  buildTestApp(t, engine, { env: { LICENCE_PUBLIC_KEY: PUBLIC_B64, ...env } });
const get = async (ta: TestApp) => {
  const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: URL });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};
const put = (ta: TestApp, key: string) => call(ta.app, ta.ownerToken, { method: 'PUT', url: URL, payload: { key } });

forEachDatabase('licence', (engine) => {
  test('session-only and admin-only; community by default with a stable installation id', async (t) => {
    const ta = await app(t, engine);
    const key = await newApiKey(ta, ['settings:view', 'settings:edit']);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const payload = method === 'PUT' ? { key: licence() } : undefined;
      expectProblem(await call(ta.app, key.secret, { method, url: URL, payload }), 403, 'session_required');
      expectProblem(await call(ta.app, null, { method, url: URL, payload }), 401, 'unauthorized');
    }
    const operator = await newOperator(ta, ['settings:view', 'settings:edit', 'operators:view', 'operators:edit']);
    expectProblem(await call(ta.app, operator.token, { method: 'GET', url: URL }), 403, 'forbidden');
    expectProblem(
      await call(ta.app, operator.token, { method: 'PUT', url: URL, payload: { key: licence() } }),
      403,
      'forbidden',
    );
    expectProblem(await call(ta.app, operator.token, { method: 'DELETE', url: URL }), 403, 'forbidden');

    const first = await get(ta);
    assert.match(first.installation_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(first, {
      installation_id: first.installation_id,
      status: 'community',
      licence: null,
      warning: null,
    });
    assert.equal((await get(ta)).installation_id, first.installation_id, 'made once, then kept');
  });

  test('concurrent first reads agree on one installation id', async (t) => {
    const ta = await app(t, engine);
    const ids = await Promise.all(Array.from({ length: 8 }, () => installationId(ta.db)));
    assert.equal(new Set(ids).size, 1);
    assert.equal((await get(ta)).installation_id, ids[0]);
  });

  test('a valid key is installed and audited without the key itself', async (t) => {
    const ta = await app(t, engine);
    const key = licence({ licence_id: 'LIC-0001' });
    // Wrapped as pasted from an e-mail: whitespace is ignored.
    const res = await put(ta, `${key.slice(0, 40)}\n  ${key.slice(40)}\n`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'valid');
    assert.equal(body.warning, null);
    assert.equal(body.licence.licence_id, 'LIC-0001');
    assert.equal(body.licence.holder, 'Acme GmbH');
    assert.equal(body.licence.plan, 'pro');
    assert.deepEqual(body.licence.limits, { operators: 10, leads_per_month: 50_000 });
    assert.equal(body.licence.days_left, 365);
    assert.equal(body.licence.installation_id, null);
    assert.deepEqual(await get(ta), body);

    const entry = await ta.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'licence.installed')
      .executeTakeFirstOrThrow();
    assert.equal(entry.actor_id, ta.ownerId);
    assert.equal(entry.target_id, 'LIC-0001');
    const details = JSON.parse(entry.details);
    assert.equal(details.holder, 'Acme GmbH');
    assert.match(details.key_sha256, /^[0-9a-f]{16}$/);
    const signature = key.split('.')[2];
    assert.ok(!entry.details.includes(signature), 'the audit log never holds the key');
    assert.ok(!ta.logs.join('').includes(signature), 'nor does the request log');

    // Back to community; audited.
    const del = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: URL });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal(del.json().status, 'community');
    assert.equal(del.json().installation_id, body.installation_id);
    assert.ok(
      await ta.db.selectFrom('audit_log').select('id').where('action', '=', 'licence.removed').executeTakeFirst(),
    );
  });

  test('forged, foreign-signed, malformed, expired and wrongly bound keys are refused; the licence in force stays', async (t) => {
    const ta = await app(t, engine);
    const good = licence({ licence_id: 'LIC-GOOD', plan: 'pro' });
    assert.equal((await put(ta, good)).statusCode, 200);
    const before = await get(ta);

    // The payload changed after signing (plan upgraded, limits raised), the signature kept.
    const [prefix, payloadPart, signature] = licence({ licence_id: 'LIC-FORGED', plan: 'starter' }).split('.');
    const payload = JSON.parse(Buffer.from(payloadPart, 'base64url').toString());
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ ...payload, plan: 'enterprise', limits: {} })).toString('base64url')}.${signature}`;
    assert.match(expectProblem(await put(ta, forged), 400, 'licence_invalid').detail, /not signed/);

    // Signed by some other private key.
    const other = generateKeyPairSync('ed25519').privateKey;
    expectProblem(await put(ta, licence({ licence_id: 'LIC-OTHER' }, other)), 400, 'licence_invalid');
    // A truncated signature: still a signature that does not verify.
    expectProblem(await put(ta, good.slice(0, -10)), 400, 'licence_invalid');

    // Not a licence key at all: validation_failed naming `key`.
    for (const bad of [
      'hello',
      'LG2.abc.def',
      'LG1.abc',
      'LG1.!!!.abc',
      `LG1.${Buffer.from('not json').toString('base64url')}.abc`,
      `LG1.${Buffer.from('{"v":1}').toString('base64url')}.abc`,
    ]) {
      const problem = expectProblem(await put(ta, bad), 400, 'validation_failed');
      assert.deepEqual(
        problem.errors!.map((e) => e.field),
        ['key'],
        bad,
      );
    }
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'PUT', url: URL, payload: {} }),
      400,
      'validation_failed',
    );
    expectProblem(await put(ta, 'x'.repeat(9000)), 400, 'validation_failed');

    // Expired, authentically signed.
    const expired = licence({
      issued_at: new Date(Date.now() - 400 * DAY).toISOString(),
      expires_at: new Date(Date.now() - DAY).toISOString(),
    });
    assert.match(expectProblem(await put(ta, expired), 400, 'licence_expired').detail, /expired on \d{4}-\d{2}-\d{2}/);

    // Bound to another installation.
    expectProblem(await put(ta, licence({ installation_id: randomUUID() })), 400, 'licence_wrong_installation');

    assert.deepEqual(await get(ta), before, 'every refusal left the licence in force');
    const installs = await ta.db
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'licence.installed')
      .execute();
    assert.equal(installs.length, 1);
  });

  test('a licence bound to this installation is accepted', async (t) => {
    const ta = await app(t, engine);
    const { installation_id } = await get(ta);
    const res = await put(ta, licence({ installation_id }));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'valid');
    assert.equal(res.json().licence.installation_id, installation_id);
  });

  test('within 30 days of expiry: expiring, with a warning', async (t) => {
    const ta = await app(t, engine);
    const res = await put(ta, licence({ expires_at: new Date(Date.now() + 12 * DAY - 60_000).toISOString() }));
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'expiring');
    assert.equal(body.licence.days_left, 12);
    assert.match(body.warning, /expires in 12 days/);
    // 31 days away is still plainly valid.
    assert.equal(
      (await put(ta, licence({ expires_at: new Date(Date.now() + 31 * DAY).toISOString() }))).json().status,
      'valid',
    );
  });

  test('an installed licence that lapses shows expired; one that no longer verifies shows invalid', async (t) => {
    const ta = await app(t, engine);
    // Stored directly: as if installed in the past, or under a release with another public key.
    await saveLicence(
      ta.db,
      licence({
        issued_at: new Date(Date.now() - 400 * DAY).toISOString(),
        expires_at: new Date(Date.now() - 2 * DAY).toISOString(),
      }),
    );
    let body = await get(ta);
    assert.equal(body.status, 'expired');
    assert.equal(body.licence.days_left, 0);
    assert.match(body.warning, /expired on/);

    await saveLicence(ta.db, licence({ holder: 'Someone Else' }, generateKeyPairSync('ed25519').privateKey));
    body = await get(ta);
    assert.equal(body.status, 'invalid');
    assert.equal(body.licence.holder, 'Someone Else', 'shown, so the admin sees what is stored');
    assert.match(body.warning, /does not verify/);

    await saveLicence(ta.db, 'LG1.garbage.stored');
    body = await get(ta);
    assert.equal(body.status, 'invalid');
    assert.equal(body.licence, null);
  });
});

test('LICENCE_PUBLIC_KEY: PEM or base64 SPKI; anything else is a clear config error', () => {
  const pem = vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  for (const value of [PUBLIC_B64, pem, pem.replace(/\n/g, '\\n')]) {
    assert.ok(loadConfig({ LICENCE_PUBLIC_KEY: value }).licencePublicKey.equals(vendor.publicKey));
  }
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
  for (const bad of ['not a key', rsa]) {
    assert.throws(
      () => loadConfig({ LICENCE_PUBLIC_KEY: bad }),
      (err: unknown) => err instanceof ConfigError && /LICENCE_PUBLIC_KEY/.test(err.message),
    );
  }
  assert.equal(loadConfig({}).licencePublicKey.asymmetricKeyType, 'ed25519', 'the built-in key');
});

const SCRIPT = ['--import', 'tsx', path.resolve('scripts/licence.ts')];

test('npm run licence: keygen, then issue a key the server accepts', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-licence-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await run(process.execPath, [...SCRIPT, 'keygen', '--out', dir]);
  const privatePem = path.join(dir, 'leadgate-vendor-private-key.pem');
  const publicPem = readFileSync(path.join(dir, 'leadgate-vendor-public-key.pem'), 'utf8');

  const ta = await buildTestApp(t, 'sqlite', { env: { LICENCE_PUBLIC_KEY: publicPem } });
  const { installation_id } = await get(ta);
  const issued = await run(process.execPath, [
    ...SCRIPT,
    'issue',
    '--key',
    privatePem,
    '--holder',
    'Acme Ltd',
    '--plan',
    'business',
    '--expires',
    '2099-12-31',
    '--installation',
    installation_id,
    '--limit',
    'operators=25',
    '--limit',
    'leads_per_month=100000',
  ]);
  const res = await put(ta, issued.stdout.trim());
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.status, 'valid');
  assert.deepEqual(
    {
      holder: body.licence.holder,
      plan: body.licence.plan,
      limits: body.licence.limits,
      expires_at: body.licence.expires_at,
      bound: body.licence.installation_id,
    },
    {
      holder: 'Acme Ltd',
      plan: 'business',
      limits: { operators: 25, leads_per_month: 100000 },
      expires_at: '2099-12-31T23:59:59.000Z',
      bound: installation_id,
    },
  );

  // Bad arguments: exit 2 with a message naming what is wrong, nothing on stdout.
  const refusals: [string[], RegExp][] = [
    [['issue', '--key', privatePem, '--holder', 'A', '--plan', 'pro'], /needs --expires/],
    [['issue', '--key', privatePem, '--holder', 'A', '--plan', 'pro', '--expires', '2001-01-01'], /in the past/],
    [['issue', '--key', privatePem, '--holder', 'A', '--plan', 'pro', '--expires', '2099-02-30'], /not a real date/],
    [
      [
        'issue',
        '--key',
        privatePem,
        '--holder',
        'A',
        '--plan',
        'pro',
        '--expires',
        '2099-01-01',
        '--limit',
        'Operators=x',
      ],
      /--limit must be NAME=N/,
    ],
    [
      [
        'issue',
        '--key',
        privatePem,
        '--holder',
        'A',
        '--plan',
        'pro',
        '--expires',
        '2099-01-01',
        '--installation',
        'nope',
      ],
      /--installation must be/,
    ],
    [
      [
        'issue',
        '--key',
        path.join(dir, 'leadgate-vendor-public-key.pem'),
        '--holder',
        'A',
        '--plan',
        'pro',
        '--expires',
        '2099-01-01',
      ],
      /not an Ed25519 private key/,
    ],
    [
      ['issue', '--key', path.join(dir, 'missing.pem'), '--holder', 'A', '--plan', 'pro', '--expires', '2099-01-01'],
      /cannot read it \(ENOENT\)/,
    ],
    [['issue', '--bogus'], /Unknown option '--bogus'/],
    [['keygen', '--out', dir], /already exists/],
    [['frobnicate'], /Unknown command "frobnicate"/],
  ];
  for (const [args, message] of refusals) {
    const err = await run(process.execPath, [...SCRIPT, ...args]).then(
      () => assert.fail(`${args.join(' ')} succeeded`),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    assert.equal(err.code, 2, args.join(' '));
    assert.match(err.stderr, message, args.join(' '));
    assert.equal(err.stdout, '');
  }
});
