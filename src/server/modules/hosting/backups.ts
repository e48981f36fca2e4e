import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { conflict, HttpProblem } from '../../http/errors.js';

// How a backup is made: `VACUUM INTO` on a second, read-only connection, on a worker thread.
// - Consistent: VACUUM INTO reads inside one read transaction, so the copy is the database at
//   one instant, whatever commits meanwhile. (better-sqlite3's db.backup() copies page by page
//   and, when another connection writes, starts over — it may never finish under steady intake;
//   on the app's own connection it would share the event loop with intake.)
// - Does not block intake: in WAL mode a reader never blocks the writer, and the copy runs off
//   the event loop. The only cost is disk I/O and the WAL growing until the reader lets go.
// - Written to a .partial name, fsynced (VACUUM INTO does not sync), then renamed: a listed
//   backup is always whole.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.source, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.prepare('VACUUM INTO ?').run(workerData.target);
  const fd = fs.openSync(workerData.target, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  parentPort.postMessage({ ok: true });
} catch (err) {
  parentPort.postMessage({ error: String((err && err.message) || err) });
} finally {
  if (db) db.close();
}
`;

/** leadgate-<UTC time to the millisecond>.sqlite: the only names listed, served or deleted. */
export const BACKUP_NAME = /^leadgate-\d{8}T\d{9}Z\.sqlite$/;
export const BACKUP_NAME_PATTERN = BACKUP_NAME.source;

export interface BackupFile {
  name: string;
  size_bytes: number;
  created_at: string;
}

export const backupDir = (dataDir: string) => path.join(dataDir, 'backups');

const nameFor = (at: Date) => `leadgate-${at.toISOString().replace(/[-:.]/g, '')}.sqlite`;

function runWorker(source: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { source, target, module: createRequire(import.meta.url).resolve('better-sqlite3') },
    });
    let done = false;
    worker.on('message', (m: { ok?: true; error?: string }) => {
      done = true;
      if (m.ok) resolve();
      else reject(new Error(`SQLite backup failed: ${m.error}`));
    });
    worker.on('error', (err) => reject(err));
    worker.on('exit', (code) => done || reject(new Error(`SQLite backup worker exited with code ${code}`)));
  });
}

// One backup at a time: a second request while one runs would only double the I/O.
let running = false;

/** Makes a consistent copy of the SQLite database `source` into the backups folder. */
export async function makeBackup(source: string, dataDir: string): Promise<BackupFile> {
  if (running) conflict('A backup is being made right now; wait for it to finish.');
  running = true;
  const dir = backupDir(dataDir);
  const name = nameFor(new Date());
  const target = path.join(dir, name);
  const partial = `${target}.partial`;
  try {
    await fs.promises.mkdir(dir, { recursive: true });
    if (fs.existsSync(target)) conflict(`A backup named ${name} already exists.`);
    await fs.promises.rm(partial, { force: true });
    await runWorker(source, partial);
    await fs.promises.rename(partial, target);
    return fileInfo(name, await fs.promises.stat(target));
  } catch (err) {
    await fs.promises.rm(partial, { force: true });
    throw err;
  } finally {
    running = false;
  }
}

function fileInfo(name: string, stat: fs.Stats): BackupFile {
  return { name, size_bytes: stat.size, created_at: stat.mtime.toISOString() };
}

/** The finished backups, newest first (half-written .partial files are not listed). */
export async function listBackups(dataDir: string): Promise<BackupFile[]> {
  const dir = backupDir(dataDir);
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: BackupFile[] = [];
  for (const name of names.filter((n) => BACKUP_NAME.test(n))) {
    const stat = await fs.promises.stat(path.join(dir, name)).catch(() => null);
    if (stat?.isFile()) files.push(fileInfo(name, stat));
  }
  return files.sort((a, b) => b.name.localeCompare(a.name));
}

/** The path of an existing backup; 404 when there is none by that name. */
export async function backupPath(dataDir: string, name: string): Promise<{ file: string; size: number }> {
  // The route's pattern already refuses other names; checked again because this builds a path.
  if (!BACKUP_NAME.test(name)) throw new HttpProblem(404, 'not_found', 'No backup with that name.');
  const file = path.join(backupDir(dataDir), name);
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat?.isFile()) throw new HttpProblem(404, 'not_found', 'No backup with that name.');
  return { file, size: stat.size };
}
