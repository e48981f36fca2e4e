// Dispatch throughput: how fast one process sends the outbox's deliveries to receivers that
// answer at once, in-process (the app built as the tests build it, its dispatcher driven by
// drain()), the receivers in another process (bench/partner.ts) so their CPU is not counted.
// Per engine: a fresh database, two webhooks and the provider's postbacks subscribed to
// lead.received and lead.delivered, --leads leads posted through intake with dispatch off (each
// delivered to the partner: 2 events, 6 deliveries per lead, every lead's two events in order
// per destination), then the whole backlog drained and timed. Reported: deliveries/s and the
// process's CPU time per delivery (the steadier number on a shared machine).
//   npx tsx bench/dispatch.ts [--engines sqlite,postgres] [--leads 2000] [--postgres-url …]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { openDatabase } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { createOwner, ensureAdminRole } from '../src/server/modules/operators/service.js';
import { benchRoute, freePort, type ApiCall } from './server.js';

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    leads: { type: 'string', default: '2000' },
    'postgres-url': {
      type: 'string',
      default:
        process.env.BENCH_POSTGRES_URL ||
        process.env.TEST_POSTGRES_URL ||
        'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const LEADS = Math.min(20_000, Math.max(100, Number(args.leads)));
const WARM_UP_LEADS = 200;
const OWNER = { email: 'bench@example.com', password: 'bench-password-123', name: 'Bench' };
const log = (...a: unknown[]) => console.error('[bench:dispatch]', ...a);

const port = await freePort();
const receiver = fork(fileURLToPath(new URL('./partner.ts', import.meta.url)), [String(port), '0'], {
  execArgv: ['--import', 'tsx'],
  stdio: 'inherit',
});
await new Promise((resolve) => receiver.once('message', resolve));
const origin = `http://127.0.0.1:${port}`;

async function benchEngine(engine: string): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leadgate-bench-dispatch-'));
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    EVENT_DISPATCH_INTERVAL_MS: '0',
    DELIVERY_RECOVERY_INTERVAL_MS: '0',
    PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8',
    RATE_LIMIT_PER_KEY: '0',
    RATE_LIMIT_PER_IP: '0',
  });
  const schema = `dispatch_bench_${process.pid}`;
  const admin = engine === 'postgres' ? new pg.Client({ connectionString: args['postgres-url'] }) : null;
  if (admin) {
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`);
    config.database = { engine: 'postgres', url: args['postgres-url']!, schema };
  }
  const db = openDatabase(config.database);
  await migrate(db);
  await ensureAdminRole(db);
  await createOwner(db, OWNER);
  const app = await buildApp(config, db, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
  try {
    const call: ApiCall = async (method, url, payload, token) => {
      const res = await app.inject({
        method: method as 'GET' | 'POST' | 'PUT',
        url,
        payload: payload as never,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const { token, campaign } = await benchRoute(call, port);
    const { provider } = await campaign('Bench provider');
    const types = ['lead.received', 'lead.delivered'];
    for (const name of ['Bench hook A', 'Bench hook B'])
      await call('POST', '/api/webhooks', { name, url: `${origin}/hook`, event_types: types }, token);
    await call(
      'PUT',
      `/api/traffic-providers/${provider.id}/postbacks`,
      {
        postbacks: types.map((event_type) => ({
          event_type,
          campaign_id: null,
          url: `${origin}/pb?click={sub_id1}&status={status}`,
        })),
      },
      token,
    );

    let serial = 0;
    const post = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const k = ++serial;
        const res = await app.inject({
          method: 'POST',
          url: '/api/intake/leads',
          headers: { authorization: `Bearer ${provider.token}` },
          payload: {
            first_name: 'Dee',
            last_name: 'Spatch',
            email: `d${k}@example.com`,
            phone: `+49151${String(10_000_000 + k)}`,
            country: 'DE',
            ip: '203.0.113.9',
            sub_id1: `c${k}`,
          },
        });
        if (res.json().status !== 'delivered') throw new Error(`lead ${k}: ${res.body}`);
      }
    };
    const count = async (table: 'events' | 'event_deliveries', where: [string, string, unknown]) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(...(where as [any, any, any]))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const waiting = async () =>
      (await count('events', ['fanned', '=', 0])) + (await count('event_deliveries', ['state', '=', 'pending']));
    // The fan-out (events into deliveries) is part of dispatching: timed with the sends.
    const drainAll = async () => {
      while ((await app.events.drain()) > 0 || (await waiting()) > 0);
    };
    log(`${engine}: warm-up, ${WARM_UP_LEADS} leads`);
    await post(WARM_UP_LEADS);
    await drainAll();
    log(`${engine}: ${LEADS} leads posted with dispatch off`);
    await post(LEADS);
    const before = await count('event_deliveries', ['state', '=', 'delivered']);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await drainAll();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const backlog = (await count('event_deliveries', ['state', '=', 'delivered'])) - before;
    const failed = await count('event_deliveries', ['state', '!=', 'delivered']);
    // A failed try is retried after 5 s, 15 s…: a run with one measures the backoff, not dispatch.
    const errors = await db
      .selectFrom('event_delivery_tries')
      .select(['error', (eb) => eb.fn.countAll<number>().as('n')])
      .where('ok', '=', 0)
      .groupBy('error')
      .execute();
    if (errors.length) log(`${engine}: failed tries (retried)`, JSON.stringify(errors));
    const row = `| ${engine} | ${backlog} | ${seconds.toFixed(2)} s | ${(backlog / seconds).toFixed(0)} | ${((used.user + used.system) / 1000 / backlog).toFixed(3)} ms | ${failed} |`;
    log(row);
    return row;
  } finally {
    await app.close();
    await db.destroy();
    if (admin) {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: string[] = [];
try {
  for (const engine of args.engines!.split(',').map((e) => e.trim())) rows.push(await benchEngine(engine));
} finally {
  receiver.kill('SIGTERM');
}
console.log(
  `\nMachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${new Date().toISOString()}`,
);
console.log('| engine | deliveries | drained in | deliveries/s | CPU per delivery | not delivered |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
