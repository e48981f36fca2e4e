// Issue 12: a database that cannot be reached or cannot write answers 503 `unavailable` with
// Retry-After, never 500; the outage shows in databaseStatus() and /api/health; when it ends,
// intake works again by itself and every lead that was answered 201 is kept. Real engines
// throughout: a throwaway PostgreSQL cluster stopped and started under intake, a real full disk
// (a 16 MiB tmpfs) under SQLite, and SQLite's own size limit (max_page_count) for real SQLITE_FULL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { openDatabase, type DB } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { databaseStatus, unavailableReason, WRITE_FAILURE_MEMORY_MS } from '../src/server/db/unavailable.js';
import { createOwner, ensureAdminRole } from '../src/server/modules/operators/service.js';
import type { App } from '../src/server/types.js';
import { ENGINES, OWNER, POSTGRES_URL, TEST_PARTNER_NETWORKS, call, expectProblem, login } from './helpers.js';
import { accepting, defaultIntegration, startPartner } from './partner-server.js';
import { freePort } from './processes.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- what counts as an outage: real errors from the real drivers --------------------------------

describe('unavailableReason: outage errors from the real drivers', () => {
  test('PostgreSQL refusing connections (nothing listening) is an outage', async () => {
    const port = await freePort();
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const err = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err, 'connected to a port where nothing listens');
    assert.match(String(unavailableReason(err)), /ECONNREFUSED/);
  });

  test('SQLite: SQLITE_FULL (size limit), SQLITE_BUSY (locked past busy_timeout), SQLITE_READONLY, SQLITE_CANTOPEN are outages; a constraint is not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'leadgate-unavail-'));
    try {
      const file = join(dir, 'x.db');
      const a = new SQLite(file);
      a.pragma('journal_mode = WAL');
      a.exec('create table t (id integer primary key, v blob)');
      const errorOf = (f: () => unknown) => {
        try {
          f();
        } catch (e) {
          return e as { code: string };
        }
        assert.fail('no error');
      };

      const pages = Number(a.pragma('page_count', { simple: true }));
      a.pragma(`max_page_count = ${pages}`);
      const full = errorOf(() => a.prepare('insert into t (v) values (randomblob(100000))').run());
      assert.equal(full.code, 'SQLITE_FULL');
      assert.match(String(unavailableReason(full)), /SQLITE_FULL/);
      a.pragma('max_page_count = 1073741823');

      const b = new SQLite(file);
      b.pragma('busy_timeout = 0');
      a.exec('begin immediate');
      const busy = errorOf(() => b.exec('begin immediate'));
      a.exec('rollback');
      assert.match(busy.code, /^SQLITE_BUSY/);
      assert.ok(unavailableReason(busy));

      const ro = new SQLite(file, { readonly: true });
      const readonly = errorOf(() => ro.prepare('insert into t (v) values (1)').run());
      assert.match(readonly.code, /^SQLITE_READONLY/);
      assert.ok(unavailableReason(readonly));

      const cantopen = errorOf(() => new SQLite(dir).prepare('select 1').get()); // a directory is no database file
      assert.match(cantopen.code, /^SQLITE_CANTOPEN/);
      assert.ok(unavailableReason(cantopen));

      a.prepare('insert into t (id) values (1)').run();
      const unique = errorOf(() => a.prepare('insert into t (id) values (1)').run());
      assert.match(unique.code, /^SQLITE_CONSTRAINT/);
      assert.equal(unavailableReason(unique), null, 'a constraint violation is a conflict or a bug, not an outage');
      for (const c of [ro, b, a]) c.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('PostgreSQL SQLSTATE classes: 08 connection, 53 resources (53100 disk full), 57P01-03 shutdown, 25006 read-only; not 23505 or 40001', () => {
    // The server raises these only in states a test cannot cheaply reach (a full disk, a standby),
    // so the classification of the codes themselves is checked here, as pg reports them.
    const pgError = (code: string) => Object.assign(new Error('x'), { code, severity: 'FATAL' });
    for (const code of ['08006', '08001', '08P01', '53100', '53200', '53300', '57P01', '57P02', '57P03', '25006']) {
      assert.ok(unavailableReason(pgError(code)), `${code} is an outage`);
    }
    for (const code of ['23505', '23503', '40001', '40P01', '42P01', '22P02', '57014']) {
      assert.equal(unavailableReason(pgError(code)), null, `${code} is not an outage`);
    }
    assert.ok(unavailableReason(new Error('Connection terminated unexpectedly')));
    assert.ok(unavailableReason(new Error('timeout exceeded when trying to connect')));
    assert.ok(unavailableReason(new AggregateError([Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })])));
    assert.equal(unavailableReason(new TypeError("Cannot read properties of undefined (reading 'id')")), null);
  });

  if (ENGINES.includes('postgres')) {
    test('PostgreSQL: a connection terminated by an administrator (57P01) is an outage', async () => {
      const victim = new pg.Client({ connectionString: POSTGRES_URL });
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      victim.on('error', () => {}); // the terminated connection also emits 'error'
      await victim.connect();
      await admin.connect();
      try {
        const { rows } = await victim.query('select pg_backend_pid() as pid');
        await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
        const err = await victim.query('select 1').then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(err, 'a terminated connection still answered');
        assert.ok(
          unavailableReason(err),
          `not classified: ${(err as Error).message} ${(err as { code?: string }).code}`,
        );
      } finally {
        await victim.end().catch(() => {});
        await admin.end();
      }
    });
  }
});

// --- an app on a database we can break -----------------------------------------------------------

interface OutageApp {
  app: App;
  db: DB;
  token: string;
  logs: string[];
  close: () => Promise<void>;
}

/** buildTestApp's twin on a database given by env (DATABASE_URL or DATA_DIR), with the server's SQLite checkpointer. */
async function buildAppOn(t: TestContext, env: Record<string, string>): Promise<OutageApp> {
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    DELIVERY_RECOVERY_INTERVAL_MS: '200', // the recovery sweep runs through the outage too
    PARTNER_ALLOWED_NETWORKS: TEST_PARTNER_NETWORKS,
    RATE_LIMIT_PER_KEY: '0',
    RATE_LIMIT_PER_IP: '0',
    ...env,
  });
  const db = openDatabase(config.database, { backgroundCheckpoints: config.database.engine === 'sqlite' });
  await migrate(db);
  await ensureAdminRole(db);
  await createOwner(db, OWNER);
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const app = await buildApp(config, db, { logStream });
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= app.close().then(() => db.destroy()));
  t.after(close);
  return { app, db, token: await login(app, OWNER.email, OWNER.password), logs, close };
}

/** A partner that takes every lead, a flow to it, a provider (no duplicate checks) and its campaign; returns the intake token. */
async function intakeWorld(t: TestContext, oa: OutageApp): Promise<string> {
  const partner = await startPartner(t, accepting());
  const create = async (url: string, payload: unknown) => {
    const res = await call(oa.app, oa.token, { method: 'POST', url, payload: payload as Record<string, unknown> });
    assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    return res.json();
  };
  const p = await create('/api/partners', {
    name: 'Broker',
    integration: defaultIntegration(partner.url, { timeout_ms: 1000 }),
  });
  const flow = await create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
  const provider = await create('/api/traffic-providers', {
    name: 'Affiliate',
    duplicate_policy: { fields: [], window_hours: 0, scope: 'provider' },
  });
  await create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  return provider.token;
}

let serial = 0;
const postLead = (app: App, token: string) => {
  const n = ++serial;
  return call(app, token, {
    method: 'POST',
    url: '/api/intake/leads',
    payload: {
      first_name: 'Out',
      last_name: `Age${n}`,
      email: `outage.${n}@example.com`,
      phone: `+4915113${String(n).padStart(6, '0')}`,
      country: 'DE',
      ip: '198.51.100.7',
    },
  });
};

/** Records every intake answer; each must be 201 or 503 `unavailable` with Retry-After. */
class Answers {
  readonly accepted = new Set<string>();
  unavailable = 0;
  constructor(private readonly logs: string[] = []) {}
  add(res: LightMyRequestResponse): number {
    if (res.statusCode === 201) this.accepted.add(res.json().id);
    else if (res.statusCode === 503) {
      expectProblem(res, 503, 'unavailable');
      const retry = Number(res.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 30, `Retry-After: ${res.headers['retry-after']}`);
      this.unavailable++;
    } else {
      const logged = this.logs
        .filter((l) => l.includes('"unhandled error"'))
        .slice(-1)
        .join('');
      assert.fail(`intake answered ${res.statusCode} ${res.body} (only 201 or 503 may be)\n${logged}`);
    }
    return res.statusCode;
  }
}

/** Intake answers 201 again within `ms` (every answer meanwhile is checked). */
async function untilAccepted(app: App, token: string, answers: Answers, ms: number) {
  const deadline = Date.now() + ms;
  while (answers.add(await postLead(app, token)) !== 201) {
    assert.ok(Date.now() < deadline, `intake did not recover within ${ms} ms`);
    await sleep(100);
  }
}

async function assertAllKept(db: DB, ids: Set<string>) {
  const list = [...ids];
  const found = new Set<string>();
  for (let i = 0; i < list.length; i += 500) {
    const rows = await db
      .selectFrom('leads')
      .select('id')
      .where('id', 'in', list.slice(i, i + 500))
      .execute();
    rows.forEach((r) => found.add(r.id));
  }
  assert.deepEqual(
    list.filter((id) => !found.has(id)),
    [],
    'leads answered 201 are missing',
  );
}

// --- (a) PostgreSQL stopped and started again under intake ---------------------------------------

interface Cluster {
  url: string;
  stop: (mode: 'fast' | 'immediate') => Promise<void>;
  start: () => Promise<void>;
}

/** A PostgreSQL cluster of this test's own (the shared one must never stop), or why there cannot be one. */
async function throwawayPostgres(t: TestContext): Promise<Cluster | string> {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (!versions.length) return `no PostgreSQL server binaries under ${root}`;
  const bin = join(root, versions.sort((x, y) => Number(y) - Number(x))[0], 'bin');
  if (process.getuid?.() !== 0) return 'not root: PostgreSQL must run as the postgres user, started through runuser';
  let uid: number;
  let gid: number;
  try {
    uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  } catch {
    return 'no postgres user to run the server as';
  }
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-outage-pg-'));
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]);
  const start = async () => {
    await asPostgres('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-h 127.0.0.1 -p ${port} -k ${dir} -c fsync=off`,
      'start',
    ]);
  };
  const stop = async (mode: 'fast' | 'immediate') => {
    await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  };
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust']);
  t.after(async () => {
    await stop('immediate').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, start };
}

describe('PostgreSQL stopped under intake, then started again', () => {
  test(
    'answers are 201 or 503 unavailable with Retry-After, health says unavailable, intake recovers by itself, every 201 is kept',
    { timeout: 180_000 },
    async (t) => {
      const cluster = await throwawayPostgres(t);
      if (typeof cluster === 'string') {
        if (process.env.CI === 'true') assert.fail(`CI must run this test: ${cluster}`);
        return t.skip(cluster);
      }
      const oa = await buildAppOn(t, { DATABASE_URL: cluster.url });
      const token = await intakeWorld(t, oa);
      const answers = new Answers(oa.logs);
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);

      // Both ways a server goes away: fast (backends told 57P01) and immediate (connections cut).
      for (const mode of ['fast', 'immediate'] as const) {
        let stopLoad = false;
        const load = Array.from({ length: 6 }, async () => {
          while (!stopLoad) {
            answers.add(await postLead(oa.app, token));
            await sleep(10);
          }
        });
        await sleep(300); // leads in flight when the server goes
        const before503 = answers.unavailable;
        await cluster.stop(mode);
        const down = Date.now();
        while (answers.unavailable - before503 < 10 && Date.now() - down < 20_000) await sleep(50);
        assert.ok(answers.unavailable - before503 >= 10, `no 503 while PostgreSQL was stopped (${mode})`);

        await assertHealth(oa.app, true);
        const status = await databaseStatus(oa.db);
        assert.equal(status.ok, false);
        assert.equal(status.reachable, false);
        assert.ok(status.error, 'the status says what is wrong');

        await cluster.start();
        await untilAccepted(oa.app, token, answers, 30_000);
        stopLoad = true;
        await Promise.all(load);
        // A request in flight beside the first 201 may still have met a connection the restart
        // cut, after that 201's commit: its failed write is remembered until the next commit
        // (db/unavailable.ts), and health said unavailable once in CI (2026-12-04) right after
        // the load stopped. A lead that goes through after the load clears it.
        await untilAccepted(oa.app, token, answers, 10_000);
        await assertHealth(oa.app, false);
        assert.equal((await databaseStatus(oa.db)).ok, true);
      }
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);
      await assertAllKept(oa.db, answers.accepted);
      assert.ok(!oa.logs.some((l) => l.includes('"unhandled error"')), 'an outage error reached the 500 path');
      t.diagnostic(
        `${answers.accepted.size} leads answered 201, ${answers.unavailable} answered 503; every 201 is in the database`,
      );
    },
  );
});

// --- (b) SQLite that cannot write: a full disk, and its own size limit ----------------------------

/** GET /api/health: 503 `unavailable` with Retry-After while `down`, else 200 `ok`. */
async function assertHealth(app: App, down: boolean) {
  const res = await app.inject({ method: 'GET', url: '/api/health' });
  assert.equal(res.statusCode, down ? 503 : 200, `health: ${res.body}`);
  assert.equal(res.json().status, down ? 'unavailable' : 'ok');
  if (down) assert.ok(Number(res.headers['retry-after']) >= 1, 'health 503 without Retry-After');
}

const integrity = async (db: DB) =>
  (await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db)).rows.map((r) => r.integrity_check);

describe('SQLite on a full disk (a 16 MiB tmpfs)', () => {
  test(
    'answers are 201 or 503 unavailable, status reports it; with space again it recovers, integrity ok, every 201 kept',
    { timeout: 120_000 },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'leadgate-outage-full-'));
      const mounted =
        process.getuid?.() === 0 &&
        // Room for the migrated database, its WAL after the refused leads, and LOW_DISK_BYTES
        // more once the filler is gone: on 4 MiB the grown schema left under 1 MiB free after
        // recovery, so health stayed "disk full" (the run that failed in CI at 8193e7d).
        (await run('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir]).then(
          () => true,
          () => false,
        ));
      if (!mounted) {
        rmSync(dir, { recursive: true, force: true });
        return t.skip(
          'mounting a tmpfs is not permitted here (needs root and CAP_SYS_ADMIN); the max_page_count test below makes real SQLITE_FULL instead',
        );
      }
      const oa = await buildAppOn(t, { DATA_DIR: dir });
      t.after(async () => {
        await oa.close();
        await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
        rmSync(dir, { recursive: true, force: true });
      });
      const token = await intakeWorld(t, oa);
      const answers = new Answers(oa.logs);
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);

      // Fill every byte left.
      const filler = join(dir, 'filler');
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(16 * 1024, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
      }
      try {
        for (;;) writeSync(fd, chunk, 0, 512);
      } catch {
        /* the last crumbs */
      }
      closeSync(fd);
      const early = await databaseStatus(oa.db);
      assert.deepEqual(
        { writable: early.writable, ok: early.ok },
        { writable: false, ok: false },
        `a full disk is reported before a write fails: ${JSON.stringify(early)}`,
      );
      assert.match(String(early.error), /disk full/);
      await assertHealth(oa.app, true);

      // Post until the database refuses (the WAL has some room of its own first).
      const deadline = Date.now() + 60_000;
      while (answers.unavailable < 5 && Date.now() < deadline) {
        await Promise.all(Array.from({ length: 8 }, async () => answers.add(await postLead(oa.app, token))));
      }
      assert.ok(answers.unavailable >= 5, `the full disk never refused a lead (${answers.accepted.size} accepted)`);
      const status = await databaseStatus(oa.db);
      assert.equal(status.writable, false, JSON.stringify(status));
      assert.equal(status.ok, false);
      assert.match(String(status.error), /disk full|SQLITE_(FULL|IOERR)/);
      await assertHealth(oa.app, true);
      assert.ok(!oa.logs.some((l) => l.includes('"unhandled error"')), 'a full disk reached the 500 path');

      unlinkSync(filler);
      await untilAccepted(oa.app, token, answers, 20_000);
      {
        const after = await databaseStatus(oa.db);
        assert.equal(after.ok, true, `a successful write clears the mark: ${JSON.stringify(after)}`);
      }
      await assertHealth(oa.app, false);
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);
      await assertAllKept(oa.db, answers.accepted);
      assert.deepEqual(await integrity(oa.db), ['ok']);

      // And on disk, through a fresh connection after the app is gone.
      await oa.close();
      const file = new SQLite(join(dir, 'leadgate.db'), { readonly: true });
      try {
        assert.deepEqual(file.pragma('integrity_check', { simple: true }), 'ok');
        const ids = new Set((file.prepare('select id from leads').all() as { id: string }[]).map((r) => r.id));
        assert.deepEqual(
          [...answers.accepted].filter((id) => !ids.has(id)),
          [],
          'a 201 lead is not in the file',
        );
      } finally {
        file.close();
      }
      t.diagnostic(`${answers.accepted.size} leads answered 201, ${answers.unavailable} answered 503`);
    },
  );
});

describe('SQLite at its size limit (max_page_count: real SQLITE_FULL from the engine)', () => {
  test(
    'answers are 201 or 503 unavailable, status reports it; with room again it recovers, integrity ok, every 201 kept',
    { timeout: 60_000 },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'leadgate-outage-limit-'));
      const oa = await buildAppOn(t, { DATA_DIR: dir });
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const token = await intakeWorld(t, oa);
      const answers = new Answers(oa.logs);
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);

      // Kysely's SQLite dialect has one connection: the limit applies to every statement the app runs.
      const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(oa.db)).rows[0].page_count);
      await sql.raw(`pragma max_page_count = ${pages}`).execute(oa.db);
      const deadline = Date.now() + 30_000;
      while (answers.unavailable < 5 && Date.now() < deadline) {
        await Promise.all(Array.from({ length: 8 }, async () => answers.add(await postLead(oa.app, token))));
      }
      assert.ok(answers.unavailable >= 5, `the size limit never refused a lead (${answers.accepted.size} accepted)`);
      const status = await databaseStatus(oa.db);
      assert.deepEqual(
        { ok: status.ok, reachable: status.reachable, writable: status.writable },
        { ok: false, reachable: true, writable: false },
      );
      assert.match(String(status.error), /SQLITE_FULL/);
      assert.ok(status.last_write_failure_at);
      await assertHealth(oa.app, true);
      assert.ok(!oa.logs.some((l) => l.includes('"unhandled error"')), 'SQLITE_FULL reached the 500 path');
      assert.ok(
        oa.logs.some((l) => l.includes('database unavailable: answered 503')),
        'the outage is logged for the operator',
      );

      await sql.raw('pragma max_page_count = 1073741823').execute(oa.db);
      await untilAccepted(oa.app, token, answers, 10_000);
      {
        const after = await databaseStatus(oa.db);
        assert.equal(after.ok, true, `a successful write clears the mark: ${JSON.stringify(after)}`);
      }
      await assertHealth(oa.app, false);
      for (let i = 0; i < 5; i++) assert.equal(answers.add(await postLead(oa.app, token)), 201);
      await assertAllKept(oa.db, answers.accepted);
      assert.deepEqual(await integrity(oa.db), ['ok']);
      t.diagnostic(`${answers.accepted.size} leads answered 201, ${answers.unavailable} answered 503`);
    },
  );

  test(`a failed write is forgotten after ${WRITE_FAILURE_MEMORY_MS / 1000} s without writes, so an idle instance is not kept out of rotation`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'leadgate-outage-forget-'));
    const oa = await buildAppOn(t, { DATA_DIR: dir, DELIVERY_RECOVERY_INTERVAL_MS: '0' });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    await sql`create table big (v blob)`.execute(oa.db);
    const missing = await sql`insert into no_such_table values (1)`.execute(oa.db).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(missing, 'inserted into a table that does not exist');
    assert.equal(
      (await databaseStatus(oa.db)).ok,
      true,
      'an error that is not an outage marked the database unwritable',
    );

    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(oa.db)).rows[0].page_count);
    await sql.raw(`pragma max_page_count = ${pages}`).execute(oa.db);
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const failing = await oa.db
      .transaction()
      .execute((tx) => sql`insert into big values (randomblob(200000))`.execute(tx))
      .then(
        () => null,
        (e: unknown) => e,
      );
    assert.match(String((failing as { code?: string })?.code), /SQLITE_FULL/);
    assert.equal((await databaseStatus(oa.db)).writable, false);
    t.mock.timers.tick(WRITE_FAILURE_MEMORY_MS - 1000);
    assert.equal((await databaseStatus(oa.db)).writable, false, 'forgotten too early');
    t.mock.timers.tick(2000);
    assert.equal(
      (await databaseStatus(oa.db)).writable,
      true,
      'still unwritable long after the last failed write, with no write since',
    );
  });
});
