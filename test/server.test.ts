// The real server as a child process: start-up from the environment, the owner from
// LEADGATE_ADMIN_*, exit code 2 on bad config, and a graceful SIGTERM that lets in-flight
// requests finish. SQLite always; PostgreSQL too when TEST_DATABASES lists it.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { POSTGRES_URL, postgresOnly } from './helpers.js';
import {
  ADMIN,
  freshPostgresDatabase,
  readAnswer,
  request,
  ServerClient,
  spawnServer,
  waitFor,
  waitUntilUp,
  type Answer,
  type Child,
} from './processes.js';

const logLines = (child: Child) =>
  child.out.flatMap((l) => {
    try {
      return [JSON.parse(l) as { msg?: string; reqId?: string; req?: { url?: string }; res?: { statusCode?: number } }];
    } catch {
      return [];
    }
  });

const adminEnv = { LEADGATE_ADMIN_EMAIL: ADMIN.email, LEADGATE_ADMIN_PASSWORD: ADMIN.password };

/** Health is ok on `engine`, and the owner from the environment logs in and is who it says. */
async function provesUpAndOwner(child: Child, engine: 'sqlite' | 'postgres') {
  const health = await waitUntilUp(child);
  assert.equal(health.json().status, 'ok');
  assert.deepEqual(health.json().database, { engine, ok: true });

  const login = await request(child.port, 'POST', '/api/auth/login', ADMIN);
  assert.equal(login.status, 200, login.text);
  const { token, operator } = login.json();
  assert.match(token, /^lgs_[0-9A-Za-z]{50}$/);
  assert.equal(operator.email, ADMIN.email);

  const who = await request(child.port, 'GET', '/api/auth/whoami', undefined, { authorization: `Bearer ${token}` });
  assert.equal(who.status, 200, who.text);
  assert.equal(who.json().via, 'session');
  assert.equal(who.json().operator.role_id !== undefined, true);
  assert.ok(who.json().permissions.includes('settings:edit'), 'the owner holds every permission');

  const wrong = await request(child.port, 'POST', '/api/auth/login', {
    email: ADMIN.email,
    password: 'not-the-password',
  });
  assert.equal(wrong.status, 401);
}

/**
 * Starts `n` logins whose bodies stop one byte short, sends SIGTERM once the server has logged
 * that it is handling all of them, sends the last bytes once it has logged its shutdown, and
 * proves every one still got its full 200 answer (all of them finished after shutdown began)
 * and that the process exited 0 promptly. Holding the bodies makes "in flight at SIGTERM"
 * certain: timing the signal against argon2's ~50 ms let all logins finish first on a busy
 * machine (a CI run failed so).
 *
 * The logins travel on keep-alive connections opened beforehand, as a reverse proxy or a
 * keep-alive client would send them: a socket that stays open after its answer would hold the
 * shutdown up.
 */
async function provesGracefulShutdown(child: Child, n = 3) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: n });
  try {
    const warm = await Promise.all(
      Array.from({ length: n }, () => request(child.port, 'GET', '/api/health', undefined, {}, agent)),
    );
    assert.ok(warm.every((a) => a.status === 200 && a.headers.connection === 'keep-alive'));
    await drainLogins(child, n, agent);
  } finally {
    agent.destroy();
  }
}

/** A POST whose body is sent but for its last byte until `finish()`. */
function heldRequest(port: number, urlPath: string, body: unknown, agent: http.Agent) {
  const payload = Buffer.from(JSON.stringify(body));
  let finish = () => {};
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: urlPath,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => readAnswer(res, resolve, reject),
    );
    req.on('error', reject);
    req.write(payload.subarray(0, -1));
    finish = () => req.end(payload.subarray(-1));
  });
  return { answer, finish: () => finish() };
}

async function drainLogins(child: Child, n: number, agent: http.Agent) {
  const incoming = () =>
    logLines(child).filter((l) => l.msg === 'incoming request' && l.req?.url === '/api/auth/login').length;
  const before = incoming();
  const logins = Array.from({ length: n }, () => heldRequest(child.port, '/api/auth/login', ADMIN, agent));
  await waitFor(() => incoming() - before >= n, `${n} logins to reach the server`);
  child.proc.kill('SIGTERM');
  const signalledAt = Date.now();
  await waitFor(
    () => logLines(child).some((l) => l.msg === 'shutting down: finishing in-flight requests'),
    'the server to log its shutdown',
  );
  for (const l of logins) l.finish();

  const answers = await Promise.all(logins.map((l) => l.answer));
  for (const a of answers) {
    assert.equal(a.status, 200, a.text);
    const body = a.json();
    assert.match(body.token, /^lgs_[0-9A-Za-z]{50}$/);
    assert.equal(body.operator.email, ADMIN.email);
    assert.ok(body.expires_at);
  }
  assert.equal(new Set(answers.map((a) => a.json().token)).size, n, 'each login made its own session');

  const { code, signal } = await child.exited;
  assert.equal(signal, null, child.err());
  assert.equal(code, 0, child.err());
  const tookMs = Date.now() - signalledAt;
  assert.ok(
    tookMs < 10_000,
    `the process exited ${tookMs} ms after SIGTERM; open keep-alive sockets must not hold it up`,
  );

  // Every login completed after the shutdown line: they were in flight, not refused.
  const lines = logLines(child);
  const shutdownAt = lines.findIndex((l) => l.msg === 'shutting down: finishing in-flight requests');
  const loginIds = new Set(
    lines.filter((l) => l.msg === 'incoming request' && l.req?.url === '/api/auth/login').map((l) => l.reqId),
  );
  const completedAfter = lines
    .slice(shutdownAt)
    .filter((l) => l.msg === 'request completed' && loginIds.has(l.reqId) && l.res?.statusCode === 200).length;
  assert.equal(completedAfter, n, 'every held login completed after SIGTERM');
}

describe('server process [sqlite]', () => {
  test('starts from the environment: health is ok and the owner logs in', async (t) => {
    const child = await spawnServer(t, adminEnv);
    await provesUpAndOwner(child, 'sqlite');
    assert.ok(existsSync(path.join(child.dataDir, 'leadgate.db')), 'the SQLite file lives under DATA_DIR');
    assert.ok(child.out.some((l) => l.includes(`Created the owner ${ADMIN.email}`)));
    assert.ok(
      logLines(child).some((l) => typeof l.msg === 'string' && l.msg.includes(`http://127.0.0.1:${child.port}`)),
      'the start-up line names the address',
    );
  });

  test('bad configuration: exit code 2 and stderr names the variable', async (t) => {
    const child = await spawnServer(t, { ...adminEnv, PORT: 'abc' });
    const { code } = await child.exited;
    assert.equal(code, 2, child.err());
    assert.match(child.err(), /PORT/);
    assert.match(child.err(), /abc/);
    assert.ok(!existsSync(path.join(child.dataDir, 'leadgate.db')), 'no database was opened');
  });

  test('stored secrets and their key file gone: exit code 2, stderr says the key is missing', async (t) => {
    const first = await spawnServer(t, adminEnv);
    await waitUntilUp(first);
    const api = await new ServerClient(first.port).login();
    await api.create('/api/webhooks', {
      name: 'Ops',
      url: 'https://hooks.example.com/x',
      event_types: ['lead.delivered'],
    });
    await api.close();
    first.proc.kill('SIGTERM');
    assert.equal((await first.exited).code, 0);
    rmSync(path.join(first.dataDir, 'secret.key'));

    const second = await spawnServer(t, adminEnv, { dataDir: first.dataDir });
    const { code } = await second.exited;
    assert.equal(code, 2, second.err());
    assert.match(second.err(), /The secret key is missing: the database holds secrets sealed with key [0-9a-f]{12}/);
    assert.ok(!existsSync(path.join(first.dataDir, 'secret.key')), 'no new key was made over sealed secrets');
  });

  test('SIGTERM lets in-flight requests finish with full answers, then exits 0', async (t) => {
    // debug: "incoming request" lines show when the logins have reached the server.
    const child = await spawnServer(t, { ...adminEnv, LOG_LEVEL: 'debug' });
    await waitUntilUp(child);
    await provesGracefulShutdown(child);
    // Nothing listens any more.
    await assert.rejects(request(child.port, 'GET', '/api/health'));
  });
});

describe('server process [postgres]', () => {
  postgresOnly(
    'starts and migrates on a fresh PostgreSQL database, restarts on it, and shuts down cleanly',
    async (t) => {
      const children: Child[] = [];
      const url = await freshPostgresDatabase(t, POSTGRES_URL, children);
      const env = { ...adminEnv, DATABASE_URL: url, LOG_LEVEL: 'debug' };

      const first = await spawnServer(t, env);
      children.push(first);
      await provesUpAndOwner(first, 'postgres');
      assert.ok(first.out.some((l) => l.includes(`Created the owner ${ADMIN.email}`)));
      assert.ok(!existsSync(path.join(first.dataDir, 'leadgate.db')), 'no SQLite file when DATABASE_URL is set');

      // The tables really are in the new database.
      const check = new pg.Client({ connectionString: url });
      await check.connect();
      try {
        const ops = await check.query('select email from operators');
        assert.deepEqual(
          ops.rows.map((r) => r.email),
          [ADMIN.email],
        );
        const migrations = await check.query('select name from schema_migrations');
        assert.ok(migrations.rows.length >= 1);
      } finally {
        await check.end();
      }
      await provesGracefulShutdown(first);

      // Second start on the same database: migrations already applied, the owner kept.
      const second = await spawnServer(t, env);
      children.push(second);
      await provesUpAndOwner(second, 'postgres');
      assert.ok(!second.out.some((l) => l.includes('Created the owner')), 'the owner is not made twice');
      second.proc.kill('SIGTERM');
      assert.deepEqual(await second.exited, { code: 0, signal: null });
    },
  );
});
