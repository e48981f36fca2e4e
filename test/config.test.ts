// loadConfig: environment → typed config, every bad value named. No database.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/server/config.js';

/** The ConfigError that `env` produces (fails the test when loadConfig accepts it). */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    return err;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** Asserts exactly one problem, and that it and the message name `variable`. */
function expectNamed(env: NodeJS.ProcessEnv, variable: string) {
  const err = configError(env);
  assert.equal(err.problems.length, 1, err.message);
  assert.ok(err.problems[0].includes(variable), `problem must name ${variable}: ${err.problems[0]}`);
  assert.ok(err.message.includes(variable), `message must name ${variable}: ${err.message}`);
  return err;
}

describe('loadConfig', () => {
  test('defaults: 127.0.0.1:3000, SQLite file under ./data resolved, no owner, info logs', () => {
    const c = loadConfig({});
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 3000);
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.ok(path.isAbsolute(c.dataDir));
    assert.equal(c.database.engine, 'sqlite');
    assert.ok(c.database.engine === 'sqlite' && path.isAbsolute(c.database.file));
    assert.ok(c.database.engine === 'sqlite' && c.database.file.startsWith(path.resolve('./data') + path.sep));
    assert.equal(c.admin, null);
    assert.deepEqual(c.trustProxy, []);
    assert.equal(c.logLevel, 'info');
  });

  test('DATA_DIR moves the SQLite file; HOST and PORT are taken', () => {
    const c = loadConfig({ DATA_DIR: 'some/dir', HOST: '0.0.0.0', PORT: '8080' });
    assert.equal(c.dataDir, path.resolve('some/dir'));
    assert.ok(c.database.engine === 'sqlite' && c.database.file.startsWith(path.resolve('some/dir') + path.sep));
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.port, 8080);
    assert.equal(loadConfig({ PORT: '0' }).port, 0);
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  });

  test('a postgres:// (or postgresql://) DATABASE_URL selects PostgreSQL', () => {
    const url = 'postgres://leadgate:secret@db.internal:5432/leadgate';
    assert.deepEqual(loadConfig({ DATABASE_URL: url }).database, { engine: 'postgres', url });
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/d' }).database.engine, 'postgres');
  });

  test('the owner variables set together are taken (email lower-cased)', () => {
    const c = loadConfig({ LEADGATE_ADMIN_EMAIL: 'Boss@Example.test', LEADGATE_ADMIN_PASSWORD: 'long-enough-pw' });
    assert.deepEqual(c.admin, { email: 'boss@example.test', password: 'long-enough-pw' });
  });

  test('TRUST_PROXY takes a comma-separated list of addresses and CIDRs', () => {
    assert.deepEqual(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy, [
      '127.0.0.1/32',
      '10.0.0.0/8',
      '::1/128',
    ]);
  });

  test('PORT=abc is refused, naming PORT', () => {
    expectNamed({ PORT: 'abc' }, 'PORT');
  });

  test('PORT=70000 is refused, naming PORT', () => {
    expectNamed({ PORT: '70000' }, 'PORT');
    expectNamed({ PORT: '-1' }, 'PORT');
  });

  test('DATABASE_URL=mysql://x is refused, naming DATABASE_URL', () => {
    expectNamed({ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL');
  });

  test('only one of the owner variables set is refused, naming both', () => {
    const a = expectNamed({ LEADGATE_ADMIN_EMAIL: 'boss@example.test' }, 'LEADGATE_ADMIN_PASSWORD');
    assert.ok(a.problems[0].includes('LEADGATE_ADMIN_EMAIL'));
    const b = expectNamed({ LEADGATE_ADMIN_PASSWORD: 'long-enough-pw' }, 'LEADGATE_ADMIN_EMAIL');
    assert.ok(b.problems[0].includes('LEADGATE_ADMIN_PASSWORD'));
  });

  test('a bad owner email is refused, naming LEADGATE_ADMIN_EMAIL', () => {
    expectNamed(
      { LEADGATE_ADMIN_EMAIL: 'not-an-email', LEADGATE_ADMIN_PASSWORD: 'long-enough-pw' },
      'LEADGATE_ADMIN_EMAIL',
    );
  });

  test('a short owner password is refused, naming LEADGATE_ADMIN_PASSWORD, without echoing it', () => {
    const err = expectNamed(
      { LEADGATE_ADMIN_EMAIL: 'boss@example.test', LEADGATE_ADMIN_PASSWORD: 'short9' },
      'LEADGATE_ADMIN_PASSWORD',
    );
    assert.ok(!err.message.includes('short9'), 'the password must not appear in the error');
  });

  test('TRUST_PROXY=not-an-ip is refused, naming TRUST_PROXY', () => {
    expectNamed({ TRUST_PROXY: 'not-an-ip' }, 'TRUST_PROXY');
    expectNamed({ TRUST_PROXY: '127.0.0.1,10.0.0.0/99' }, 'TRUST_PROXY');
  });

  test('LOG_LEVEL=loud is refused, naming LOG_LEVEL', () => {
    expectNamed({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
  });

  test('HTTP timeouts and the connection limit: sensible defaults, taken from the environment, bad values named', () => {
    const d = loadConfig({});
    assert.deepEqual(
      [d.requestTimeoutMs, d.headersTimeoutMs, d.keepAliveTimeoutMs, d.maxConnections],
      [60_000, 30_000, 72_000, 10_000],
    );
    const c = loadConfig({
      REQUEST_TIMEOUT_MS: '5000',
      HEADERS_TIMEOUT_MS: '2000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      MAX_CONNECTIONS: '50',
    });
    assert.deepEqual(
      [c.requestTimeoutMs, c.headersTimeoutMs, c.keepAliveTimeoutMs, c.maxConnections],
      [5000, 2000, 1000, 50],
    );
    for (const name of ['REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS', 'KEEP_ALIVE_TIMEOUT_MS', 'MAX_CONNECTIONS']) {
      expectNamed({ [name]: '0' }, name); // 0 would mean "no limit", the finding itself
      expectNamed({ [name]: 'soon' }, name);
      expectNamed({ [name]: '99999999999' }, name);
    }
    // Node refuses a server whose headers may take longer than the whole request.
    const err = expectNamed({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' }, 'HEADERS_TIMEOUT_MS');
    assert.match(err.problems[0], /REQUEST_TIMEOUT_MS/);
  });

  test('background jobs: each has its own interval; those that went with dispatch stay off with it', () => {
    const jobs = (c: ReturnType<typeof loadConfig>) => [
      c.dispatchIntervalMs,
      c.statusPullIntervalMs,
      c.providerSilenceIntervalMs,
      c.eventPurgeIntervalMs,
      c.idempotencyPurgeIntervalMs,
      c.sqliteCheckpointIntervalMs,
      c.providerLogIntervalMs,
      c.injectionIntervalMs,
      c.injectionRuleIntervalMs,
      c.reviewAlertIntervalMs,
      c.retentionIntervalMs,
      c.reportFoldIntervalMs,
    ];
    assert.deepEqual(
      jobs(loadConfig({})),
      [1000, 15_000, 300_000, 3_600_000, 3_600_000, 250, 2000, 1000, 15_000, 60_000, 600_000, 60_000],
    );
    assert.deepEqual(
      jobs(loadConfig({ EVENT_DISPATCH_INTERVAL_MS: '0' })),
      [0, 0, 0, 0, 3_600_000, 250, 0, 0, 0, 0, 600_000, 0],
    );
    assert.deepEqual(
      jobs(
        loadConfig({
          EVENT_DISPATCH_INTERVAL_MS: '0',
          STATUS_PULL_INTERVAL_MS: '60000',
          SQLITE_CHECKPOINT_INTERVAL_MS: '0',
          PROVIDER_LOG_INTERVAL_MS: '500',
          INJECTION_INTERVAL_MS: '2000',
          INJECTION_RULE_INTERVAL_MS: '60000',
          REVIEW_ALERT_INTERVAL_MS: '30000',
          RETENTION_INTERVAL_MS: '0',
          REPORT_FOLD_INTERVAL_MS: '120000',
        }),
      ),
      [0, 60_000, 0, 0, 3_600_000, 0, 500, 2000, 60_000, 30_000, 0, 120_000],
    );
    for (const name of [
      'STATUS_PULL_INTERVAL_MS',
      'PROVIDER_SILENCE_INTERVAL_MS',
      'EVENT_PURGE_INTERVAL_MS',
      'IDEMPOTENCY_PURGE_INTERVAL_MS',
      'SQLITE_CHECKPOINT_INTERVAL_MS',
      'PROVIDER_LOG_INTERVAL_MS',
      'INJECTION_INTERVAL_MS',
      'INJECTION_RULE_INTERVAL_MS',
      'REVIEW_ALERT_INTERVAL_MS',
      'RETENTION_INTERVAL_MS',
      'REPORT_FOLD_INTERVAL_MS',
    ]) {
      expectNamed({ [name]: 'hourly' }, name);
      expectNamed({ [name]: '99999999999' }, name);
    }
  });

  test('imports: IMPORT_INTERVAL_MS goes with dispatch; IMPORT_MAX_BYTES defaults to 256 MiB, IMPORT_CHUNK_BYTES to 64 KiB; bad values named', () => {
    const c = loadConfig({});
    assert.deepEqual([c.importIntervalMs, c.importMaxBytes, c.importChunkBytes], [1000, 256 * 1024 * 1024, 4 * 1024]);
    assert.equal(loadConfig({ EVENT_DISPATCH_INTERVAL_MS: '0' }).importIntervalMs, 0);
    const set = loadConfig({ IMPORT_INTERVAL_MS: '250', IMPORT_MAX_BYTES: '4096' });
    assert.deepEqual([set.importIntervalMs, set.importMaxBytes], [250, 4096]);
    expectNamed({ IMPORT_INTERVAL_MS: 'often' }, 'IMPORT_INTERVAL_MS');
    expectNamed({ IMPORT_MAX_BYTES: '10' }, 'IMPORT_MAX_BYTES');
    expectNamed({ IMPORT_CHUNK_BYTES: '0' }, 'IMPORT_CHUNK_BYTES');
  });

  test('mail: none by default; SMTP_URL and MAIL_FROM read into host, port, security, credentials and sender', () => {
    assert.equal(loadConfig({}).mail, null);
    const from = 'Leadgate <noreply@example.com>';
    const starttls = loadConfig({ SMTP_URL: 'smtp://me%40example.com:p%3Ass@mail.example.com', MAIL_FROM: from }).mail;
    assert.deepEqual(starttls, {
      host: 'mail.example.com',
      port: 587,
      security: 'starttls',
      username: 'me@example.com',
      password: 'p:ss',
      from: { name: 'Leadgate', address: 'noreply@example.com' },
      display: 'smtp://mail.example.com:587',
    });
    const tls = loadConfig({ SMTP_URL: 'smtps://u:pw@[::1]', MAIL_FROM: 'noreply@example.com' }).mail!;
    assert.deepEqual(
      [tls.host, tls.port, tls.security, tls.display, tls.from],
      ['::1', 465, 'tls', 'smtps://[::1]:465', { name: null, address: 'noreply@example.com' }],
    );
    const plain = loadConfig({
      SMTP_URL: 'smtp://127.0.0.1:2525?starttls=off',
      MAIL_FROM: '"Lead Gate" <a@b.co>',
    }).mail!;
    assert.deepEqual(
      [plain.security, plain.port, plain.username, plain.password, plain.from.name],
      ['none', 2525, null, null, 'Lead Gate'],
    );
    // A name may be in any script (the message encodes it); the address is ASCII.
    assert.equal(loadConfig({ SMTP_URL: 'smtp://m.example.com', MAIL_FROM: 'Ünï <a@b.co>' }).mail!.from.name, 'Ünï');
  });

  test('mail: a bad SMTP_URL or MAIL_FROM is named, and the SMTP password is never echoed', () => {
    const from = 'noreply@example.com';
    const secret = 'sup3r-secret';
    for (const url of [
      `http://u:${secret}@mail.example.com`,
      `smtp://u:${secret}@mail.example.com/path`,
      `smtp://u:${secret}@mail.example.com?starttls=maybe`,
      `smtp://u:${secret}@mail.example.com?starttls=off`,
      `smtps://u:${secret}@mail.example.com?starttls=off`,
      `smtp://u:${secret}@mail.example.com?tls=1`,
      `smtp://u:${secret}@`,
      `smtp://:${secret}@mail.example.com`,
      `u:${secret} at mail`,
    ]) {
      const err = expectNamed({ SMTP_URL: url, MAIL_FROM: from }, 'SMTP_URL');
      assert.ok(!err.message.includes(secret), `the password leaked: ${err.message}`);
    }
    expectNamed({ SMTP_URL: 'smtp://mail.example.com' }, 'MAIL_FROM');
    expectNamed({ MAIL_FROM: from }, 'MAIL_FROM');
    for (const bad of ['not an address', 'A <a@b.co> extra', 'a@b.co\r\nBcc: x@y.co', 'Lead <ü@b.co>', 'a,b@c.co'])
      expectNamed({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: bad }, 'MAIL_FROM');
  });

  test('several bad values are reported together, each by name', () => {
    const err = configError({
      PORT: 'abc',
      DATABASE_URL: 'mysql://x',
      LEADGATE_ADMIN_EMAIL: 'nope',
      LEADGATE_ADMIN_PASSWORD: 'short',
      TRUST_PROXY: 'not-an-ip',
      LOG_LEVEL: 'loud',
    });
    const names = [
      'PORT',
      'DATABASE_URL',
      'LEADGATE_ADMIN_EMAIL',
      'LEADGATE_ADMIN_PASSWORD',
      'TRUST_PROXY',
      'LOG_LEVEL',
    ];
    assert.equal(err.problems.length, names.length, err.message);
    for (const name of names) {
      assert.ok(
        err.problems.some((p) => p.startsWith(name)),
        `a problem must start with ${name}: ${err.message}`,
      );
      assert.ok(err.message.includes(name));
    }
  });
});
