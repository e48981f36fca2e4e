// A key-authenticated lead read against bare Fastify serving the same JSON (issue 14): what
// authentication and the lead read cost per request. Both servers run in their own process on
// 127.0.0.1; autocannon (16 connections, --seconds each) measures them in interleaved pairs, and
// the median of the pairs is reported.
//
//   npx tsx bench/auth-read.ts [--leads 200000] [--pairs 3] [--seconds 4] [--reuse]
//
// SQLite, demo data as bench/run.ts loads it (--reuse keeps the previous run's).
import { spawn } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { databaseUrl, loadFreshDemoData } from './data.js';
import { freePort, OWNER, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '200000' },
    pairs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    reuse: { type: 'boolean', default: false },
  },
});
const PAIRS = Math.min(9, Math.max(1, Number(args.pairs)));
const SECONDS = Math.min(30, Math.max(1, Number(args.seconds)));
const log = (...a: unknown[]) => console.error('[bench:auth-read]', ...a);

// The bare server: Fastify, one route, the same body, a Bearer header compared to a constant.
const BARE = `
const fastify = require('fastify')({ logger: false });
const body = process.env.BODY, token = 'Bearer ' + process.env.TOKEN;
fastify.get('/api/leads/:id', async (req, reply) => {
  if (req.headers.authorization !== token) return reply.code(401).send({ error: 'unauthorized' });
  return reply.type('application/json').send(body);
});
fastify.listen({ host: '127.0.0.1', port: Number(process.env.PORT) }).then(() => console.log('up'));
`;

async function measure(url: string, token: string): Promise<number> {
  const r = await autocannon({
    url,
    connections: 16,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}` },
  });
  if (r.non2xx) throw new Error(`${url}: ${r.non2xx} answers were not 2xx`);
  return r.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const url = databaseUrl('sqlite', '');
  const prepared = args.reuse
    ? 'reused'
    : `loaded in ${(await loadFreshDemoData('sqlite', url, Number(args.leads), '')).toFixed(0)} s`;
  const { base, child } = await startServer(url);
  const port = await freePort();
  let bare: ReturnType<typeof spawn> | null = null;
  try {
    const login = (await (
      await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(OWNER),
      })
    ).json()) as { token: string };
    const keyRes = await fetch(`${base}/api/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `auth-read ${Date.now()}`, scopes: ['leads:view'] }),
    });
    const key = ((await keyRes.json()) as { secret: string }).secret;
    const page = (await (
      await fetch(`${base}/api/leads/search?limit=1&status=delivered`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { id: string }[] };
    const leadUrl = `/api/leads/${page.data[0].id}`;
    const body = await (await fetch(`${base}${leadUrl}`, { headers: { authorization: `Bearer ${key}` } })).text();
    bare = spawn(process.execPath, ['-e', BARE], {
      env: { ...process.env, BODY: body, TOKEN: key, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => bare!.stdout!.once('data', () => resolve()));
    const lg: number[] = [];
    const bf: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      lg.push(await measure(`${base}${leadUrl}`, key));
      bf.push(await measure(`http://127.0.0.1:${port}${leadUrl}`, key));
      log(`pair ${i + 1}: Leadgate ${lg.at(-1)!.toFixed(0)} req/s, bare Fastify ${bf.at(-1)!.toFixed(0)} req/s`);
    }
    const [l, b] = [median(lg), median(bf)];
    console.log(
      [
        `Date: ${new Date().toISOString()}`,
        `Command: npx tsx bench/auth-read.ts --pairs ${PAIRS} --seconds ${SECONDS}${args.reuse ? ' --reuse' : ` --leads ${args.leads}`}`,
        `Machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Node ${process.version}; SQLite (${prepared})`,
        '',
        '| server | req/s (median of pairs) | pairs |',
        '|---|---:|---|',
        `| Leadgate, GET ${'/api/leads/{id}'} with an API key | ${l.toFixed(0)} | ${lg.map((x) => x.toFixed(0)).join(', ')} |`,
        `| bare Fastify, the same JSON | ${b.toFixed(0)} | ${bf.map((x) => x.toFixed(0)).join(', ')} |`,
        `| ratio | ${(l / b).toFixed(2)}× | |`,
      ].join('\n'),
    );
  } finally {
    bare?.kill('SIGTERM');
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
