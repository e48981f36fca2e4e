import { Readable } from 'node:stream';
import type { Static } from 'typebox';
import type { DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { providerInScope } from '../../db/record-scope.js';
import { isScoped } from '../../db/scope.js';
import { csvCell } from '../../http/csv.js';
import { conflict, HttpProblem, invalid, notFound, type FieldError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { maskContactLike } from '../../privacy/mask.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { CsvError, CsvReader } from '../../http/csv-reader.js';
import {
  campaignById,
  deleteImport,
  deleteWork,
  errorPage,
  importById,
  insertChunk,
  insertImport,
  listImports,
  providerById,
  resetWork,
  saveMapping,
  savedMapping,
  setState,
  updateImport,
  type ImportRow,
} from './queries.js';
import { guessMapping, headerHash, mappingErrors } from './rules.js';
import type { DryRunBody, RunBody } from './schemas.js';
import { checkRoute } from './route.js';

// CSV imports: a file uploaded in chunks, checked by a dry run, imported to a traffic provider
// and campaign. The use cases here; worker.ts works the chunks in the background.

const canSeeContacts = (p: Principal) => p.permissions.has('leads:contacts');

export function importView(r: ImportRow) {
  return {
    id: r.id,
    state: r.state,
    name: r.name,
    bytes: Number(r.bytes),
    rows: r.rows,
    columns: JSON.parse(r.columns) as string[],
    mapping: r.mapping === null ? null : (JSON.parse(r.mapping) as Record<string, string>),
    traffic_provider_id: r.traffic_provider_id,
    campaign_id: r.campaign_id,
    mode: r.mode,
    injection_id: r.injection_id,
    progress: {
      rows_done: r.rows_done,
      rows: r.rows,
      percent: r.rows ? Math.round((1000 * r.rows_done) / r.rows) / 10 : 100,
    },
    counts: { good: r.good, bad: r.bad, duplicates: r.duplicates, imported: r.imported },
    dry_run: r.dry_run === null ? null : JSON.parse(r.dry_run),
    error: r.error,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at,
  };
}

const tooLarge = (max: number) =>
  new HttpProblem(
    413,
    'payload_too_large',
    `The file is larger than IMPORT_MAX_BYTES (${max} bytes); nothing was kept.`,
  );

/**
 * POST /api/imports: the CSV streamed into chunks (never the whole file in memory). A file that
 * is not CSV or is too large is refused, and what was stored of it deleted.
 */
export async function uploadImport(
  db: DB,
  actor: Actor,
  body: unknown,
  opts: { name?: string; maxBytes: number; declaredBytes?: number; chunkChars: number },
) {
  const principal = principalOf(actor);
  if (!(body instanceof Readable))
    throw new HttpProblem(415, 'unsupported_media_type', 'Send the file as the body with Content-Type: text/csv.');
  if (opts.declaredBytes !== undefined && opts.declaredBytes > opts.maxBytes) throw tooLarge(opts.maxBytes);
  const id = newId();
  const now = nowIso();
  const reader = new CsvReader();
  let created = false;
  let bytes = 0;
  let seq = 0;
  let pending: string[][] = [];
  let pendingChars = 0;
  let nextRow = 1;
  const sample: string[][] = [];
  const flush = async () => {
    if (!pending.length) return;
    await insertChunk(db, {
      import_id: id,
      seq: seq++,
      first_row: nextRow,
      row_count: pending.length,
      data: JSON.stringify(pending),
    });
    nextRow += pending.length;
    pending = [];
    pendingChars = 0;
  };
  const take = async (rows: string[][]) => {
    if (!created && reader.columns) {
      const columns = reader.columns;
      await insertImport(db, {
        id,
        state: 'uploading',
        name: opts.name ?? null,
        columns: JSON.stringify(columns),
        header_hash: headerHash(columns),
        bytes: 0,
        rows: 0,
        ...ZERO,
        created_by: principal.operator.id,
        created_at: now,
        updated_at: now,
      });
      created = true;
    }
    for (const r of rows) {
      if (sample.length < 5) sample.push(r);
      pending.push(r);
      pendingChars += r.reduce((n, c) => n + c.length + 3, 1);
      if (pendingChars >= opts.chunkChars) {
        await flush();
        // A fast client keeps the body's buffer full, so the loop would parse and store the whole
        // file without letting a request in (SQLite's statements are synchronous): one turn each chunk.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };
  try {
    for await (const piece of body) {
      const buf = piece as Buffer;
      bytes += buf.length;
      if (bytes > opts.maxBytes) throw tooLarge(opts.maxBytes);
      await take(reader.push(buf));
    }
    await take(reader.end());
    await flush();
  } catch (err) {
    if (created) await deleteImport(db, id);
    if (err instanceof CsvError)
      throw new HttpProblem(
        400,
        'validation_failed',
        `The file is not CSV: ${err.row ? `row ${err.row} ` : ''}${err.message}; nothing was kept.`,
        [{ field: err.row ? `row ${err.row}` : 'header', message: err.message }],
      );
    throw err;
  }
  const columns = reader.columns!;
  const row = await db.transaction().execute(async (tx) => {
    await updateImport(tx, id, { state: 'uploaded', bytes, rows: reader.rows, updated_at: nowIso() });
    await audit(tx, actor, {
      action: 'import.uploaded',
      target_type: 'import',
      target_id: id,
      details: { name: opts.name ?? null, bytes, rows: reader.rows, columns },
    });
    return (await importById(tx, id))!;
  });
  const saved = await savedMapping(db, row.header_hash);
  const mask = canSeeContacts(principal) ? (c: string) => c : maskContactLike;
  return {
    ...importView(row),
    sample: sample.map((r) => r.map(mask)),
    suggested_mapping: saved ? (JSON.parse(saved.mapping) as Record<string, string>) : guessMapping(columns),
  };
}

/** The import, if the caller may see it: a scoped role sees only its own imports (404 alike). */
async function visibleImport(db: DB, actor: Actor, id: string): Promise<ImportRow> {
  const principal = principalOf(actor);
  const row = await importById(db, id);
  if (!row || row.state === 'uploading' || (isScoped(principal.scope) && row.created_by !== principal.operator.id))
    return notFound('import');
  return row;
}

export const getImport = async (db: DB, actor: Actor, id: string) => importView(await visibleImport(db, actor, id));

export async function listImportsFor(db: DB, actor: Actor, query: { limit: number; cursor?: string }) {
  const principal = principalOf(actor);
  const after = decodeCursor(query.cursor, ['c', 'id'] as const);
  const rows = await listImports(db, after, query.limit + 1, isScoped(principal.scope) ? principal.operator.id : null);
  const page = pageOf(rows, query.limit, (r) => ({ c: r.created_at, id: r.id }));
  return { data: page.data.map(importView), next_cursor: page.next_cursor };
}

/** The provider and campaign: known, not archived, in the caller's scope, belonging together. */
async function checkTarget(db: DB, principal: Principal, body: Static<typeof DryRunBody>): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const provider = await providerById(db, body.traffic_provider_id);
  if (!provider || provider.archived_at !== null || !providerInScope(principal.scope, provider.id))
    errors.push({
      field: 'traffic_provider_id',
      message: 'names no traffic provider you may import to (or an archived one)',
    });
  const campaign = await campaignById(db, body.campaign_id);
  if (!campaign || campaign.archived_at !== null || !providerInScope(principal.scope, campaign.traffic_provider_id))
    errors.push({ field: 'campaign_id', message: 'names no campaign (or an archived one)' });
  else if (provider && campaign.traffic_provider_id !== provider.id)
    errors.push({ field: 'campaign_id', message: 'is not a campaign of this traffic provider' });
  return errors;
}

const ZERO = { next_seq: 0, rows_done: 0, good: 0, bad: 0, duplicates: 0, imported: 0 };

const STARTABLE = ['uploaded', 'validated'] as const;

/** POST /api/imports/{id}/dry-run and /run: checked, the mapping saved, the work handed to the worker. */
export async function startImport(
  db: DB,
  actor: Actor,
  id: string,
  kind: 'dry_run' | 'import',
  body: Static<typeof DryRunBody> | Static<typeof RunBody>,
) {
  const principal = principalOf(actor);
  const row = await visibleImport(db, actor, id);
  const columns = JSON.parse(row.columns) as string[];
  const errors = [...mappingErrors(body.mapping, columns), ...(await checkTarget(db, principal, body))];
  const run = kind === 'import' ? (body as Static<typeof RunBody>) : null;
  const route = run ? await checkRoute(db, principal, run, errors) : null;
  if (errors.length) invalid(errors);
  const now = nowIso();
  const mapping = JSON.stringify(body.mapping);
  const to = kind === 'dry_run' ? 'validating' : 'importing';
  // The last run's keys (two per row) go first, in batches, while the import still waits to start.
  await resetWork(db, id, STARTABLE);
  const started = await db.transaction().execute(async (tx) => {
    const moved = await setState(tx, id, [...STARTABLE], to, {
      mapping,
      traffic_provider_id: body.traffic_provider_id,
      campaign_id: body.campaign_id,
      mode: run ? run.mode : row.mode,
      route: run ? (route === null ? null : JSON.stringify(route)) : row.route,
      ...ZERO,
      updated_at: now,
      lease_holder: null,
      lease_until: null,
    });
    if (!moved) return false;
    await resetWork(tx, id); // what a concurrent start left, if anything
    await saveMapping(tx, row.header_hash, mapping, now);
    await audit(tx, actor, {
      action: kind === 'dry_run' ? 'import.dry_run' : 'import.started',
      target_type: 'import',
      target_id: id,
      details: {
        name: row.name,
        rows: row.rows,
        mapping: body.mapping,
        traffic_provider_id: body.traffic_provider_id,
        campaign_id: body.campaign_id,
        ...(run ? { mode: run.mode, ...(route ?? {}) } : {}),
      },
    });
    return true;
  });
  if (!started) {
    const state = (await importById(db, id))?.state ?? row.state;
    conflict(`This import is ${state}; a dry run or an import starts only from ${STARTABLE.join(' or ')}.`);
  }
  return getImport(db, actor, id);
}

const CANCELLABLE = ['uploaded', 'validating', 'validated', 'importing'] as const;

/** POST /api/imports/{id}/cancel: stops the work after the chunk in hand; the file's chunks are deleted. */
export async function cancelImport(db: DB, actor: Actor, id: string) {
  const row = await visibleImport(db, actor, id);
  const now = nowIso();
  const moved = await db.transaction().execute(async (tx) => {
    if (!(await setState(tx, id, [...CANCELLABLE], 'cancelled', { updated_at: now, finished_at: now }))) return false;
    await audit(tx, actor, {
      action: 'import.cancelled',
      target_type: 'import',
      target_id: id,
      details: { from: row.state, rows_done: row.rows_done, imported: row.imported },
    });
    return true;
  });
  if (moved) await deleteWork(db, id); // in batches, after the state: the worker stops at the next chunk
  if (!moved) {
    const state = (await importById(db, id))?.state ?? row.state;
    conflict(`This import is ${state}; only an import that is ${CANCELLABLE.join(', ')} can be cancelled.`);
  }
  return getImport(db, actor, id);
}

function errorView(principal: Principal) {
  const mask = canSeeContacts(principal) ? (v: string) => v : maskContactLike;
  return (e: { row: number; field: string; column_name: string | null; reason: string; value: string | null }) => ({
    row: e.row,
    field: e.field,
    column: e.column_name,
    reason: e.reason,
    value: e.value === null || (e.field !== 'email' && e.field !== 'phone') ? e.value : mask(e.value),
  });
}

/** GET /api/imports/{id}/errors: the bad rows of the last dry run or import, in row order. */
export async function importErrors(db: DB, actor: Actor, id: string, query: { limit: number; cursor?: string }) {
  await visibleImport(db, actor, id);
  const after = decodeCursor(query.cursor, ['r', 'f'] as const);
  const rows = await errorPage(db, id, after, query.limit + 1);
  const page = pageOf(rows, query.limit, (r) => ({ r: String(r.row), f: r.field }));
  return { data: page.data.map(errorView(principalOf(actor))), next_cursor: page.next_cursor };
}

const ERROR_COLUMNS = ['row', 'field', 'column', 'reason', 'value'] as const;

/** GET /api/imports/{id}/errors.csv: the same rows as a file, read a page at a time (never all at once). */
export async function importErrorsCsv(db: DB, actor: Actor, id: string) {
  const row = await visibleImport(db, actor, id);
  return { fileName: `import-${row.id}-errors.csv`, lines: errorLines(db, id, errorView(principalOf(actor))) };
}

async function* errorLines(db: DB, id: string, view: ReturnType<typeof errorView>) {
  yield ERROR_COLUMNS.join(',') + '\r\n';
  let after: { r: string; f: string } | null = null;
  for (;;) {
    const rows = await errorPage(db, id, after, 1000);
    if (!rows.length) return;
    yield rows
      .map(view)
      .map((e) => ERROR_COLUMNS.map((c) => csvCell(e[c])).join(',') + '\r\n')
      .join('');
    const last = rows[rows.length - 1];
    after = { r: String(last.row), f: last.field };
  }
}
