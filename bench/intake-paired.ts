// Intake, paired against a git ref: builds that commit's server in a temporary clone, then runs
// bench/intake.ts (this checkout's, the same bench for both) against it and against this
// checkout's server, alternating (ref, here; then here, ref; …) so the machine's drift falls on
// both alike, and prints each round and the median of the ratios. Every later change that
// touches intake records its cost against the last release this way (bench/RESULTS.md).
//
//   npx tsx bench/intake-paired.ts --against <ref> [--rounds 3] [--keep] -- [bench/intake.ts options]
//   e.g. npx tsx bench/intake-paired.ts --against v0.4.0 -- --engines sqlite --delays 0 --rates 250 --seconds 10
//
// The options after -- go to bench/intake.ts unchanged; they must be ones the older server
// supports (--quality full needs blocklists, for one). The clone shares this checkout's
// node_modules when both lockfiles are the same, else it runs `npm ci` of its own (`npm install`
// when npm ci refuses an older lockfile).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    against: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
});
if (!args.against) {
  console.error('Name the commit to compare with: --against <git ref> (a tag, a branch, a commit).');
  process.exit(2);
}
const ROUNDS = Math.min(10, Math.max(1, Number(args.rounds) || 3));
const log = (...a: unknown[]) => console.error('[bench:paired]', ...a);
const git = (...a: string[]) => execFileSync('git', ['-C', ROOT, ...a], { encoding: 'utf8' }).trim();

const base = git('rev-parse', '--verify', `${args.against}^{commit}`);
const head = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const clone = mkdtempSync(path.join(os.tmpdir(), 'leadgate-paired-'));

function run(cmd: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${argv.join(' ')}: exit ${code}`)),
    );
  });
}

/** The max-load row's leads/s and CPU per lead, and each paced row's added p99, from intake.ts's table. */
function parse(table: string) {
  const rows = table
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| engine') && !l.startsWith('|---'))
    .map((l) =>
      l
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim()),
    );
  return rows.map((r) => ({
    key: `${r[0]} ${r[1]}p ${r[2]} ${r[3]} ${r[4]}`,
    leadsPerSecond: Number(r[5]),
    addedP99: r[9],
    cpu: r[12],
    // "errors / non-2xx": a build answering errors fast is not faster; its rows are marked. So is
    // one that left leads undelivered (the bench partner takes every lead): a build whose
    // delivery failed after answering 201 looked faster by the work it skipped.
    failed: r[13] !== '0 / 0' || r[6].split('/')[0] !== r[6].split('/')[1],
    // PostgreSQL's own processes (older builds' bench tables have no such column).
    dbCpu: r[14] ?? '?',
  }));
}

try {
  log(`cloning ${base.slice(0, 12)} into ${clone}`);
  execFileSync('git', ['clone', '--quiet', '--no-checkout', ROOT, clone]);
  execFileSync('git', ['-C', clone, 'checkout', '--quiet', '--detach', base]);
  const lock = (dir: string) => readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
  if (existsSync(path.join(clone, 'package-lock.json')) && lock(clone) === lock(ROOT))
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  else {
    log('its lockfile differs from this checkout’s: npm ci in the clone');
    try {
      await run('npm', ['ci', '--no-audit', '--no-fund'], clone);
    } catch {
      // An older lockfile may name platform packages the registry no longer serves (npm ci then
      // refuses it): the throwaway clone installs from its package.json instead.
      log('npm ci refused the clone’s lockfile: npm install in the clone instead');
      await run('npm', ['install', '--no-audit', '--no-fund'], clone);
    }
  }
  for (const dir of [clone, ROOT]) await run('node', ['scripts/build-if-needed.mjs', 'server'], dir);

  const bench = (serverRoot: string) =>
    run('npx', ['tsx', 'bench/intake.ts', ...positionals], ROOT, { ...process.env, BENCH_SERVER_ROOT: serverRoot });
  const results: { round: number; base: ReturnType<typeof parse>; head: ReturnType<typeof parse> }[] = [];
  let machine = '';
  for (let round = 1; round <= ROUNDS; round++) {
    const order: ['base' | 'head', string][] =
      round % 2
        ? [
            ['base', clone],
            ['head', ROOT],
          ]
        : [
            ['head', ROOT],
            ['base', clone],
          ];
    const got: Partial<Record<'base' | 'head', ReturnType<typeof parse>>> = {};
    for (const [which, dir] of order) {
      log(`round ${round}: ${which}`);
      const out = await bench(dir);
      machine = out.split('\n').find((l) => l.startsWith('Machine:')) ?? machine;
      got[which] = parse(out);
    }
    results.push({ round, base: got.base!, head: got.head! });
  }

  const headName = `${head.slice(0, 12)}${dirty ? ' (with uncommitted changes)' : ''}`;
  console.log(`\n${machine}`);
  console.log(`Paired: base ${base.slice(0, 12)} (${args.against}) against head ${headName}, ${ROUNDS} rounds.`);
  console.log(
    `Command: npx tsx bench/intake-paired.ts --against ${args.against} --rounds ${ROUNDS} -- ${positionals.join(' ')}`,
  );
  console.log(
    '| round | run | base leads/s | head leads/s | head / base | base CPU per lead | head CPU per lead | base database CPU | head database CPU | base added p99 | head added p99 |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const ratios = new Map<string, number[]>();
  // CPU per lead, the server's and PostgreSQL's together: steadier than leads/s on a shared machine.
  const cpuRatios = new Map<string, number[]>();
  const totalCpu = (r: ReturnType<typeof parse>[number]) => parseFloat(r.cpu) + (parseFloat(r.dbCpu) || 0);
  for (const r of results)
    r.head.forEach((h, i) => {
      const b = r.base.find((x) => x.key === h.key) ?? r.base[i];
      const failed = h.failed || !b || b.failed;
      const ratio = !failed && b.leadsPerSecond ? h.leadsPerSecond / b.leadsPerSecond : NaN;
      if (h.key.endsWith(' max') && !failed) {
        ratios.set(h.key, [...(ratios.get(h.key) ?? []), ratio]);
        cpuRatios.set(h.key, [...(cpuRatios.get(h.key) ?? []), totalCpu(h) / totalCpu(b)]);
      }
      console.log(
        `| ${r.round} | ${h.key} | ${b?.leadsPerSecond ?? '?'} | ${h.leadsPerSecond} | ${failed ? 'errors or undelivered: not compared' : ratio.toFixed(2)} | ${b?.cpu ?? '?'} | ${h.cpu} | ${b?.dbCpu ?? '?'} | ${h.dbCpu} | ${b?.addedP99 ?? '?'} | ${h.addedP99} |`,
      );
    });
  const medianOf = (list: number[]) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)] / 2 + sorted[Math.ceil((sorted.length - 1) / 2)] / 2;
  };
  for (const [key, list] of ratios) {
    const median = medianOf(list);
    const cpu = medianOf(cpuRatios.get(key) ?? [NaN]);
    console.log(
      `\nMedian head / base at max load, ${key}: leads/s ${median.toFixed(3)} (${((median - 1) * 100).toFixed(1)} %), ` +
        `CPU per lead (server + database) ${cpu.toFixed(3)} (${((cpu - 1) * 100).toFixed(1)} %)`,
    );
  }
} finally {
  if (args.keep) log(`kept the clone at ${clone}`);
  else rmSync(clone, { recursive: true, force: true });
}
