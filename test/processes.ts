// Real server processes for tests: spawn src/server/main.ts with a clean environment, talk to
// it over loopback HTTP, wait for it to come up. Used by the start-up, shutdown, crash and
// multi-process tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN = { email: 'boss@example.test', password: 'boss-password-123' };
const START_TIMEOUT_MS = 30_000;

/** The variables loadConfig reads, so the parent's environment cannot leak into the child. */
const CONFIG_VARS = [
  'HOST',
  'PORT',
  'DATA_DIR',
  'DATABASE_URL',
  'LEADGATE_ADMIN_EMAIL',
  'LEADGATE_ADMIN_PASSWORD',
  'TRUST_PROXY',
  'SESSION_IDLE_MINUTES',
  'LOG_LEVEL',
  'BODY_LIMIT_BYTES',
  'INTAKE_WAIT_MS',
  'DELIVERY_RECOVERY_INTERVAL_MS',
  'EVENT_DISPATCH_INTERVAL_MS',
  'PARTNER_ALLOWED_NETWORKS',
  'SESSION_MAX_HOURS',
  'RATE_LIMIT_PER_KEY',
  'RATE_LIMIT_PER_IP',
  'EXPORT_CONCURRENCY',
  'METRICS_TOKEN',
  'SMTP_URL',
  'MAIL_FROM',
];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface Child {
  proc: ChildProcess;
  port: number;
  dataDir: string;
  /** stdout lines so far (pino JSON and plain console lines). */
  out: string[];
  err: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns src/server/main.ts; killed (if still running) and its DATA_DIR removed when the test ends. */
/** The secret key of every spawned server on PostgreSQL (test data only). */
const SHARED_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

export async function spawnServer(
  t: TestContext,
  env: Record<string, string>,
  opts: { dataDir?: string } = {},
): Promise<Child> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'leadgate-srv-'));
  const port = await freePort();
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [...CONFIG_VARS, 'NODE_TEST_CONTEXT']) delete base[k];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    cwd: ROOT,
    // Test partners listen on loopback, which the outbound guard refuses unless allowed on purpose;
    // load from one address would trip the request rate limits, which have tests of their own.
    env: {
      ...base,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
      RATE_LIMIT_PER_IP: '0',
      RATE_LIMIT_PER_KEY: '0',
      // Processes sharing a PostgreSQL database share its secret key, as a deployment must.
      ...(env.DATABASE_URL?.startsWith('postgres') ? { LEADGATE_SECRET_KEY: SHARED_SECRET_KEY } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  let partial = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    out.push(...lines);
  });
  let errText = '';
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (errText += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return { proc, port, dataDir, out, err: () => errText, exited };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: () => any;
}

/** Reads a response whole into an Answer. */
export function readAnswer(res: http.IncomingMessage, resolve: (a: Answer) => void, reject: (e: Error) => void) {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (c) => (text += c));
  res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }));
  res.on('error', reject);
}

export function request(
  port: number,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
  agent: http.Agent | false = false,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        agent,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...headers,
        },
      },
      (res) => readAnswer(res, resolve, reject),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Resolves once /api/health answers 200; fails if the child exits or takes too long. */
export async function waitUntilUp(child: Child): Promise<Answer> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exit: { code: number | null } | null = null;
  void child.exited.then((e) => (exit = e));
  for (;;) {
    if (exit)
      throw new Error(
        `server exited (${(exit as { code: number | null }).code}) before it was up:\n${child.err()}\n${child.out.join('\n')}`,
      );
    if (Date.now() > deadline)
      throw new Error(`server not up within ${START_TIMEOUT_MS} ms:\n${child.err()}\n${child.out.join('\n')}`);
    const res = await request(child.port, 'GET', '/api/health').catch(() => null);
    if (res?.status === 200) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (cond()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

/** The environment of server processes sharing one fresh PostgreSQL database, with the admin account made at start. */
export async function sharedPostgresEnv(
  t: TestContext,
  adminUrl: string,
  children: Child[],
): Promise<Record<string, string>> {
  return {
    LEADGATE_ADMIN_EMAIL: ADMIN.email,
    LEADGATE_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    DATABASE_URL: await freshPostgresDatabase(t, adminUrl, children),
  };
}

/**
 * `count` server processes on one fresh PostgreSQL database (the multi-process tests), each up:
 * the admin's client on the first, and one client per process (closed when the test ends).
 */
export async function serversOnOnePostgres(t: TestContext, adminUrl: string, count: number) {
  const children: Child[] = [];
  const env = await sharedPostgresEnv(t, adminUrl, children);
  for (let i = 0; i < count; i++) {
    const child = await spawnServer(t, env);
    children.push(child);
    await waitUntilUp(child);
  }
  const admin = await new ServerClient(children[0].port).login();
  const clients = children.map((c) => new ServerClient(c.port));
  t.after(() => [admin, ...clients].forEach((c) => c.close()));
  return { admin, clients, servers: children };
}

/** A fresh PostgreSQL database for server processes; dropped (after the servers stop) when the test ends. */
export async function freshPostgresDatabase(t: TestContext, adminUrl: string, children: Child[]): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `leadgate_p_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`PostgreSQL is not reachable at ${adminUrl}: ${(err as Error).message}`);
  }
  await admin.query(`create database ${name}`);
  t.after(async () => {
    // After hooks run in the order they were added: stop the servers before the drop.
    for (const c of children) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
      await c.exited;
    }
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** JSON over loopback to a child server, as the owner (ADMIN) or with a given token. */
export class ServerClient {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  token = '';
  constructor(readonly port: number) {}

  async login() {
    const res = await this.send('POST', '/api/auth/login', ADMIN);
    if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
    this.token = res.json().token;
    return this;
  }

  send(method: string, urlPath: string, body?: unknown, token = this.token): Promise<Answer> {
    return request(this.port, method, urlPath, body, token ? { authorization: `Bearer ${token}` } : {}, this.agent);
  }

  async create(urlPath: string, body: unknown): Promise<any> {
    const res = await this.send('POST', urlPath, body);
    if (res.status !== 201) throw new Error(`POST ${urlPath}: ${res.status} ${res.text}`);
    return res.json();
  }

  close() {
    this.agent.destroy();
  }
}
