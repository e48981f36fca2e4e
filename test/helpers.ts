// Test helpers: a real app on a real, fresh database (SQLite file or PostgreSQL schema),
// driven over HTTP with app.inject(). No mocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test, type TestContext, type TestOptions } from 'node:test';
import pg from 'pg';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/server/app.js';
import { loadConfig, type Config } from '../src/server/config.js';
import type { DatabaseConfig } from '../src/server/db/database.js';
import { openDatabase, type DB } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { createOwner, ensureAdminRole } from '../src/server/modules/operators/service.js';
import type { App } from '../src/server/types.js';

export type Engine = 'sqlite' | 'postgres';

export const ENGINES: Engine[] = (process.env.TEST_DATABASES || 'sqlite').split(',').map((s) => {
  const e = s.trim();
  if (e !== 'sqlite' && e !== 'postgres')
    throw new Error(`TEST_DATABASES: unknown engine "${e}" (use sqlite, postgres)`);
  return e;
});

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** What tests allow the outbound guard to reach: loopback, where their partners listen. */
export const TEST_PARTNER_NETWORKS = '127.0.0.0/8,::1/128';

export const OWNER = { email: 'owner@example.test', password: 'owner-password-1', name: 'Owner' };

/** Runs `fn` once per engine in TEST_DATABASES, each inside its own describe block. */
export function forEachDatabase(name: string, fn: (engine: Engine) => void) {
  for (const engine of ENGINES) describe(`${name} [${engine}]`, () => fn(engine));
}

/** Why a PostgreSQL-only test does not run here, or false when TEST_DATABASES lists postgres. */
export const POSTGRES_SKIP: string | false = ENGINES.includes('postgres')
  ? false
  : 'PostgreSQL is not in TEST_DATABASES (set TEST_DATABASES=sqlite,postgres)';

/**
 * A test that needs PostgreSQL (several processes on one database, pg-only answers). It runs
 * when TEST_DATABASES lists postgres, and fails if PostgreSQL is unreachable then; otherwise it
 * is reported as skipped with the reason, so a run without PostgreSQL says what it left out.
 * Under CI=true it fails instead of skipping (as browser tests do without Chromium).
 */
export function postgresOnly(
  name: string,
  fn: (t: TestContext) => Promise<void>,
  opts: Omit<TestOptions, 'skip'> = {},
) {
  if (POSTGRES_SKIP && process.env.CI === 'true') {
    return test(name, opts, () => {
      throw new Error(`${POSTGRES_SKIP}: under CI=true a PostgreSQL-only test fails instead of being skipped`);
    });
  }
  return test(name, { ...opts, skip: POSTGRES_SKIP }, fn);
}

let adminPool: pg.Pool | undefined;
function pgAdmin(): pg.Pool {
  adminPool ??= new pg.Pool({ connectionString: POSTGRES_URL, max: 2, allowExitOnIdle: true });
  return adminPool;
}

export interface TestApp {
  app: App;
  db: DB;
  config: Config;
  /** Session token of the owner (role admin). */
  ownerToken: string;
  ownerId: string;
  /** Every log line the app wrote, as text. */
  logs: string[];
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Called with every SQL statement the app runs. */
  onQuery?: (sql: string) => void;
  /** Called with every SQL statement the app's reader (src/server/db/reader.ts) runs on SQLite. */
  onReaderQuery?: (sql: string) => void;
  /** The built dashboard the app serves at `/` (default dist/web). */
  webDir?: string;
}

/** How many leads the app's database holds. */
export const leadCount = async (ta: TestApp) =>
  Number(
    (
      await ta.db
        .selectFrom('leads')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A fresh app and database for one test; closed and dropped when the test ends. */
export async function buildTestApp(t: TestContext, engine: Engine, opts: TestAppOptions = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-test-'));
  // The recovery sweep is off unless a test asks for it: fixtures write pending leads directly.
  // Test partners listen on loopback, which the outbound guard refuses unless allowed on purpose.
  // Request rate limits are off unless a test sets them (tests send thousands of requests from one address).
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'info',
    DELIVERY_RECOVERY_INTERVAL_MS: '0',
    EVENT_DISPATCH_INTERVAL_MS: '0',
    PARTNER_ALLOWED_NETWORKS: TEST_PARTNER_NETWORKS,
    RATE_LIMIT_PER_KEY: '0',
    RATE_LIMIT_PER_IP: '0',
    ...opts.env,
  });
  let schema: string | undefined;
  if (engine === 'postgres') {
    schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    try {
      await pgAdmin().query(`create schema ${schema}`);
    } catch (err) {
      throw new Error(`PostgreSQL is not reachable at TEST_POSTGRES_URL=${POSTGRES_URL}: ${(err as Error).message}`);
    }
    config.database = { engine: 'postgres', url: POSTGRES_URL, schema };
  }
  const db = openDatabase(config.database, { onQuery: opts.onQuery });
  await migrate(db);
  await ensureAdminRole(db);
  const ownerId = (await createOwner(db, OWNER))!;
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const app = await buildApp(config, db, { logStream, webDir: opts.webDir, onReaderQuery: opts.onReaderQuery });
  t.after(async () => {
    await app.close();
    await db.destroy();
    if (schema) await pgAdmin().query(`drop schema ${schema} cascade`);
    rmSync(dir, { recursive: true, force: true });
  });
  const ownerToken = await login(app, OWNER.email, OWNER.password);
  return { app, db, config, ownerToken, ownerId, logs };
}

/** An empty, unmigrated database of `engine` (a schema of its own on PostgreSQL), removed when the test ends. */
export async function emptyDatabase(t: TestContext, engine: Engine): Promise<DatabaseConfig> {
  if (engine === 'postgres') {
    const schema = `e_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await pgAdmin().query(`create schema ${schema}`);
    t.after(async () => {
      await pgAdmin().query(`drop schema ${schema} cascade`);
    });
    return { engine: 'postgres', url: POSTGRES_URL, schema };
  }
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-empty-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { engine: 'sqlite', file: join(dir, 'db.sqlite') };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** app.inject with a Bearer token. */
export function call(app: App, token: string | null, opts: InjectOptions): Promise<LightMyRequestResponse> {
  return app.inject({ ...opts, headers: { ...(token ? bearer(token) : {}), ...(opts.headers ?? {}) } });
}

export async function login(app: App, email: string, password: string, remoteAddress?: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
    ...(remoteAddress ? { remoteAddress } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`login ${email} failed: ${res.statusCode} ${res.body}`);
  return res.json().token;
}

let counter = 0;

/** A new operator holding a new role with exactly `permissions`, logged in. */
export async function newOperator(
  ta: TestApp,
  permissions: string[],
  /** Limits the role to these traffic providers and/or partners (null: any). */
  scope?: { traffic_provider_ids: string[] | null; partner_ids: string[] | null },
): Promise<{ id: string; email: string; password: string; roleId: string; token: string }> {
  const n = `${process.pid}-${++counter}`;
  const role = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/roles',
    payload: { name: `role-${n}`, permissions, ...(scope ? { scope } : {}) },
  });
  if (role.statusCode !== 201) throw new Error(`create role: ${role.statusCode} ${role.body}`);
  const email = `op-${n}@example.test`;
  const password = `password-${n}-xyz`;
  const op = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/operators',
    payload: { email, name: `Operator ${n}`, password, role_id: role.json().id, current_password: OWNER.password },
  });
  if (op.statusCode !== 201) throw new Error(`create operator: ${op.statusCode} ${op.body}`);
  return { id: op.json().id, email, password, roleId: role.json().id, token: await login(ta.app, email, password) };
}

/** Makes an API key with the given session token; returns the creation response body. */
export async function newApiKey(
  ta: TestApp,
  scopes: string[],
  opts: { token?: string; name?: string; expires_at?: string } = {},
): Promise<{ id: string; secret: string; [k: string]: unknown }> {
  const res = await call(ta.app, opts.token ?? ta.ownerToken, {
    method: 'POST',
    url: '/api/api-keys',
    payload: { name: opts.name ?? 'test key', scopes, ...(opts.expires_at ? { expires_at: opts.expires_at } : {}) },
  });
  if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`);
  return res.json();
}

/**
 * A traffic provider's portal user (issue 27): invited by the owner, its invitation accepted,
 * signed in on the usual login route; also a portal API key with both scopes.
 */
export async function newPortalUser(
  ta: TestApp,
  providerId: string,
): Promise<{ id: string; email: string; password: string; token: string; key: string; keyId: string }> {
  const n = `${process.pid}-${++counter}`;
  const email = `pu-${n}@example.test`;
  const password = `portal-${n}-xyz`;
  const inv = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: `/api/traffic-providers/${providerId}/users`,
    payload: { email, name: `Provider user ${n}` },
  });
  if (inv.statusCode !== 201) throw new Error(`invite: ${inv.statusCode} ${inv.body}`);
  const acc = await ta.app.inject({
    method: 'POST',
    url: '/api/portal/invitations/accept',
    payload: { token: inv.json().invitation_token, password },
  });
  if (acc.statusCode !== 201) throw new Error(`accept: ${acc.statusCode} ${acc.body}`);
  const token = await login(ta.app, email, password);
  const key = await call(ta.app, token, {
    method: 'POST',
    url: '/api/portal/api-keys',
    payload: { name: 'portal key', scopes: ['portal:view', 'portal:edit'] },
  });
  if (key.statusCode !== 201) throw new Error(`portal key: ${key.statusCode} ${key.body}`);
  return { id: inv.json().id, email, password, token, key: key.json().secret, keyId: key.json().id };
}

/** Asserts an application/problem+json answer with the given status and code. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  const where = `${res.statusCode} ${res.body}`;
  if (res.statusCode !== status) throw new Error(`expected ${status} ${code}, got ${where}`);
  if (!String(res.headers['content-type']).startsWith('application/problem+json'))
    throw new Error(`not problem+json: ${res.headers['content-type']}`);
  const body = res.json();
  if (
    body.code !== code ||
    body.status !== status ||
    typeof body.title !== 'string' ||
    typeof body.detail !== 'string'
  ) {
    throw new Error(`expected code ${code}, got ${where}`);
  }
  return body as { code: string; detail: string; errors?: { field: string; message: string }[] };
}

/**
 * Polls `check` until it returns a value other than undefined/false, and returns that value;
 * fails naming `what` after `ms`. For waiting on the system under test instead of a fixed sleep.
 */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** GET that must answer 200; returns the JSON body. */
export async function getJson(ta: TestApp, url: string, token = ta.ownerToken) {
  const res = await call(ta.app, token, { method: 'GET', url });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** RFC 4180, strictly: a quote inside an unquoted cell or a stray character after a closing quote throws. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  for (;;) {
    let cell = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quote');
        if (text[i] === '"' && text[i + 1] === '"') ((cell += '"'), (i += 2));
        else if (text[i] === '"') break;
        else cell += text[i++];
      }
      i++;
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bad character at ${i}`);
        cell += text[i++];
      }
    }
    row.push(cell);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
      if (i === text.length) return rows;
    } else throw new Error(`expected , or CRLF at ${i}: ${JSON.stringify(text.slice(i, i + 20))}`);
  }
}
