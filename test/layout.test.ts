// The layout rules that an import graph cannot see (the import rules are in .dependency-cruiser.cjs,
// run by npm run lint): route files hold no SQL, writes go through a use case in service.ts, and
// background work runs only as a job of the one scheduler (src/server/jobs/).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const SERVER = join(import.meta.dirname, '..', 'src', 'server');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
const source = files(SERVER).filter((f) => !f.endsWith('.test.ts'));
/** Files that declare routes (app.get(…), app.post(…), …), whatever their name. */
const routeFiles = source.filter(
  (f) => !f.includes('/http/') && /\bapp\.(get|post|put|patch|delete)\(/.test(readFileSync(f, 'utf8')),
);
const rel = (f: string) => relative(SERVER, f);

/** Kysely statements, raw SQL, transactions, and audit records (written by the use case). */
const SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|transaction)\(|\bsql`|\bsql\.raw\(|\baudit\(/;

test('files that declare routes call use cases: no SQL, no transaction, no audit record in them', () => {
  assert.ok(routeFiles.length >= 25, `found ${routeFiles.length} route files`);
  const offenders = routeFiles.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .map((line, i) => ({ line: line.trim(), at: `${rel(f)}:${i + 1}` }))
      .filter(({ line }) => SQL.test(line) && !line.startsWith('//') && !line.startsWith('*'))
      .map(({ line, at }) => `${at}  ${line}`),
  );
  assert.deepEqual(
    offenders,
    [],
    'SQL belongs in queries.ts, transactions and audit records in a use case in service.ts',
  );
});

/** Route files with a write method that store nothing, and where their use case is instead. */
const STORES_NOTHING: Record<string, string> = {
  'modules/routing/routes.ts': 'POST /api/routing/simulate stores nothing; simulate.ts is its use case',
  'modules/partners/test-lead.ts':
    'the test sends store nothing (no lead, no attempt, no audit record); the use case is in the file',
};

test('a module whose routes write calls its use cases in service.ts', () => {
  const writers = routeFiles.filter(
    (f) =>
      f.includes('/modules/') &&
      !(rel(f) in STORES_NOTHING) &&
      /\bapp\.(post|put|patch|delete)\(/.test(readFileSync(f, 'utf8')),
  );
  assert.ok(writers.length >= 15, `found ${writers.length} modules that write`);
  const without = writers.filter((f) => !/from '\.\/(service|[\w-]+-service)\.js'/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(without.map(rel), []);
});

test('background work is a job: no timer outside the scheduler, every job file is scheduled', () => {
  const timers = source.filter((f) => /\bsetInterval\(/.test(readFileSync(f, 'utf8'))).map(rel);
  assert.deepEqual(timers, [join('jobs', 'scheduler.ts')], 'a repeating timer outside jobs/ is a job without a home');
  const app = readFileSync(join(SERVER, 'app.ts'), 'utf8');
  const jobFiles = readdirSync(join(SERVER, 'jobs')).filter(
    (n) => n.endsWith('.ts') && !n.endsWith('.test.ts') && !['scheduler.ts', 'lease.ts'].includes(n),
  );
  assert.ok(jobFiles.length >= 7, `found ${jobFiles.length} job files`);
  for (const name of jobFiles) {
    const made = /export function (\w+Job)\(/.exec(readFileSync(join(SERVER, 'jobs', name), 'utf8'))?.[1];
    assert.ok(made, `jobs/${name} exports a …Job factory`);
    assert.match(app, new RegExp(`jobs\\.add\\(${made}\\(`), `app.ts adds ${made} to the scheduler`);
  }
});

/** The files and packages `file` loads when it runs: its imports that are not `import type`, followed through the server's files. */
function loads(file: string): Set<string> {
  const seen = new Set<string>();
  const todo = [file];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const text = readFileSync(f, 'utf8');
    for (const [, spec] of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'/gms)) {
      if (spec.startsWith('.')) todo.push(join(f, '..', spec.replace(/\.js$/, '.ts')));
      else seen.add(`package ${spec}`);
    }
  }
  return seen;
}

test("the export worker thread loads a database driver and a lead's view only: no query builder, no schemas, not the quality checks' lists", () => {
  const loaded = [...loads(join(SERVER, 'modules', 'leads', 'export-worker.ts'))].map((f) =>
    f.startsWith('package ') ? f : rel(f),
  );
  // The walk follows imports (a broken walk would find nothing to refuse).
  for (const needed of [
    join('modules', 'leads', 'page-rows.ts'),
    join('modules', 'leads', 'view.ts'),
    'package better-sqlite3',
  ])
    assert.ok(loaded.includes(needed), `${needed} is loaded`);
  // Each costs the thread's memory for as long as it lives (mailchecker's list alone ~5 MB; the
  // query builder, TypeBox and the search's modules ~15 MB): bench/RESULTS.md, issue 30 item 4.
  // The main thread compiles each page's statement; pg is imported only on PostgreSQL.
  const heavy = loaded.filter((f) =>
    [
      'package kysely',
      'package typebox',
      'package pg',
      join('modules', 'leads', 'search-queries.ts'),
      join('modules', 'leads', 'schemas.ts'),
      join('db', 'database.ts'),
      'package mailchecker',
      join('modules', 'quality', 'flags.ts'),
      join('modules', 'autologin', 'service.ts'),
      join('geo', 'ip-country.ts'),
      join('events', 'emit.ts'),
    ].includes(f),
  );
  assert.deepEqual(heavy, []);
});
