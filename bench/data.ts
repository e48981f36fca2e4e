// The benchmarks' databases: where each engine's lives, and a fresh one loaded with demo leads
// by the project's own generator (scripts/demo-data.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ROOT } from './server.js';

export type Engine = 'sqlite' | 'postgres';

export const WORK = path.join(os.tmpdir(), 'leadgate-bench');
const PG_DATABASE = 'leadgate_bench';

/** The database URL a benchmark uses for `engine`: a file under WORK, or a database beside `postgresUrl`'s. */
export function databaseUrl(engine: Engine, postgresUrl: string): string {
  if (engine === 'sqlite') return `sqlite:${path.join(WORK, 'sqlite', 'leadgate.db')}`;
  const url = new URL(postgresUrl);
  url.pathname = `/${PG_DATABASE}`;
  return url.toString();
}

/**
 * Drops and recreates the engine's benchmark database, then loads `leads` demo leads (`shape`:
 * more arguments for scripts/demo-data.ts, e.g. --days 730); seconds taken.
 */
export async function loadFreshDemoData(
  engine: Engine,
  url: string,
  leads: number,
  postgresUrl: string,
  shape: string[] = [],
): Promise<number> {
  if (engine === 'sqlite') {
    rmSync(path.join(WORK, 'sqlite'), { recursive: true, force: true });
    mkdirSync(path.join(WORK, 'sqlite'), { recursive: true });
  } else {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${PG_DATABASE}`);
    await admin.query(`create database ${PG_DATABASE}`);
    await admin.end();
  }
  const started = Date.now();
  const argv = ['--import', 'tsx', 'scripts/demo-data.ts', '--leads', String(leads), ...shape, '--database-url', url];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited with ${code}`))));
  });
  return (Date.now() - started) / 1000;
}
