import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Insertable } from 'kysely';
import type { DB } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import { recordProviderFacts } from '../../db/provider-facts.js';
import type { ImportErrorsTable, LeadsTable } from '../../db/tables.js';
import { activePolicy, checkedFields, windowStart } from '../intake/duplicates.js';
import { blockedReason, receivedFact } from '../intake/service.js';
import { entriesWithKeys, type BlockingEntry } from '../quality/blocklist-queries.js';
import { leadKeys } from '../quality/match-keys.js';
import { blocklistSecret } from '../quality/match-secret.js';
import { contactDigest } from '../privacy/contact-digests.js';
import { blocklistShapes } from '../quality/blocklist-shapes.js';
import { leadFlags, qualityScore, type Weights } from '../quality/flags.js';
import { QUALITY_SETTING, settingsOf } from '../quality/settings-service.js';
import { readSetting } from '../../db/settings.js';
import { shippedCountryOf } from '../../geo/ip-country.js';
import type { NormalizedLead } from '../intake/validate.js';
import {
  advance,
  campaignById,
  chunkAt,
  deleteImport,
  deleteWork,
  existingLeads,
  finishedWithWork,
  importById,
  insertErrors,
  insertKeys,
  insertLeadRows,
  providerById,
  seenKeys,
  setState,
  staleUploads,
  takeLease,
  updateImport,
  workingImports,
  type ImportRow,
} from './queries.js';
import { checkRow, indexesOf, type Mapping, type RowError } from './rules.js';

// The import worker: each tick (the imports job, every IMPORT_INTERVAL_MS) works every dry run
// and import under way that this process holds the lease of, one chunk at a time. A chunk's
// leads, its bad rows, its duplicate keys and the import's cursor are committed in one
// transaction whose first statement moves the cursor only while the import is still running,
// held by this process and at that chunk: a crash, a cancel or a lost lease leaves whole chunks
// (every row in or reported, none twice), and the next holder carries on from the cursor.

/** The import's lease: renewed with every chunk, taken over by another process when its holder stops. */
const LEASE_MS = 30_000;
/** An uploaded file never started (or an upload cut off) is deleted after this long. */
const STALE_UPLOAD_MS = 24 * 3_600_000;
/** The longest a chunk waits for live requests to be answered before it goes anyway. */
const QUIET_WAIT_MS = 250;
/** Consecutive failed chunks after which an import is failed (a passing outage is retried). */
const MAX_FAILURES = 3;

export interface ImportWorkerDeps {
  db: DB;
  log: FastifyBaseLogger;
  /** Mode route: the re-injection job over the import's leads, made in the transaction that finishes it. */
  createInjection(tx: DB, imp: ImportRow): Promise<string>;
  /** Who holds the imports' leases (tests play a second process with another). */
  holder?: string;
  /** Resolves when no live request is in flight, or after maxWaitMs (http/live-requests.ts). */
  quiet?: (maxWaitMs: number) => Promise<void>;
  /** How long one tick works an import before it lets the others have a turn (at least one chunk). */
  budgetMs?: number;
}

interface Context {
  mapping: Mapping;
  indexes: ReturnType<typeof indexesOf>;
  countries: string[];
  flowId: string | null;
  policy: ReturnType<typeof activePolicy>;
  /** The fraud flags' weights when the chunk is worked (imported leads are scored as intake scores). */
  weights: Weights;
}

class Stopped extends Error {}

const iso = (ms: number) => new Date(ms).toISOString();

export class ImportWorker {
  readonly holder: string;
  private readonly failures = new Map<string, number>();
  private purgedAt = 0;

  constructor(private readonly deps: ImportWorkerDeps) {
    this.holder = deps.holder ?? randomUUID();
  }

  /** One tick at `now` (tests pass a clock of their own). */
  async tick(now = Date.now(), signal?: AbortSignal): Promise<void> {
    const { db } = this.deps;
    if (now - this.purgedAt >= 60_000) {
      this.purgedAt = now;
      for (const { id } of await staleUploads(db, iso(now - STALE_UPLOAD_MS))) await deleteImport(db, id);
      for (const { id } of await finishedWithWork(db)) await deleteWork(db, id);
    }
    for (const { id } of await workingImports(db)) {
      if (signal?.aborted) return;
      await this.work(id, now, signal);
    }
  }

  private async work(id: string, now: number, signal?: AbortSignal) {
    const { db, log } = this.deps;
    const started = Date.now();
    const lease = () => {
      const at = now + (Date.now() - started);
      return takeLease(db, id, this.holder, iso(at), iso(at + LEASE_MS));
    };
    if (!(await lease())) return;
    const first = await importById(db, id);
    if (!first || (first.state !== 'validating' && first.state !== 'importing')) return;
    const ctx = await this.context(first);
    do {
      const imp = await importById(db, id);
      if (!imp || (imp.state !== 'validating' && imp.state !== 'importing') || imp.lease_holder !== this.holder) return;
      try {
        const more = await this.step(imp, ctx);
        this.failures.delete(id);
        if (!more) return;
      } catch (err) {
        if (err instanceof Stopped) return;
        const n = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, n);
        log.error({ err, import: id, chunk: imp.next_seq }, 'import: a chunk failed');
        if (n >= MAX_FAILURES) await this.fail(imp);
        return;
      }
      // Live traffic goes first: a chunk's work holds the event loop and, on SQLite, the one
      // writer (IMPORT_CHUNK_BYTES keeps it to milliseconds). After each chunk the worker lets
      // what came in meanwhile run, then waits until no request is being answered (at most
      // QUIET_WAIT_MS, so a busy server still imports), so an intake request meets at most the
      // one chunk that was under way when it arrived.
      await new Promise((resolve) => setImmediate(resolve));
      await this.deps.quiet?.(QUIET_WAIT_MS);
    } while (!signal?.aborted && Date.now() - started < (this.deps.budgetMs ?? 2_000) && (await lease()));
  }

  async context(imp: ImportRow): Promise<Context> {
    const columns = JSON.parse(imp.columns) as string[];
    const mapping = JSON.parse(imp.mapping!) as Mapping;
    const provider = await providerById(this.deps.db, imp.traffic_provider_id!);
    const campaign = await campaignById(this.deps.db, imp.campaign_id!);
    return {
      mapping,
      indexes: indexesOf(mapping, columns),
      countries: campaign ? (JSON.parse(campaign.countries) as string[]) : [],
      flowId: campaign?.flow_id ?? null,
      policy: provider ? activePolicy(provider.duplicate_policy) : null,
      weights: settingsOf(await readSetting(this.deps.db, QUALITY_SETTING, null)).weights,
    };
  }

  /** The chunk at the import's cursor, worked and committed; false when there is none left (then finished). */
  async step(imp: ImportRow, ctx: Context): Promise<boolean> {
    const { db } = this.deps;
    const chunk = await chunkAt(db, imp.id, imp.next_seq);
    if (!chunk) {
      await this.finish(imp);
      return false;
    }
    const rows = JSON.parse(chunk.data) as string[][];
    const errors: RowError[] = [];
    let good: { row: number; lead: NormalizedLead }[] = [];
    rows.forEach((cells, i) => {
      const r = checkRow(cells, chunk.first_row + i, ctx.mapping, ctx.indexes, ctx.countries);
      if ('lead' in r) good.push({ row: chunk.first_row + i, lead: r.lead });
      else errors.push(...r.errors);
    });
    const now = new Date();
    const blocked = await this.blocked(imp, ctx, good, now);
    if (blocked.length) {
      const rows = new Set(blocked.map((b) => b.row));
      good = good.filter((g) => !rows.has(g.row));
      errors.push(...blocked);
    }
    const bad = new Set(errors.map((e) => e.row)).size;
    const { accepted, duplicates, keys } = await this.duplicates(imp, ctx, good, now);
    good = accepted;
    const importing = imp.state === 'importing';
    const at = now.toISOString();
    const leads: Insertable<LeadsTable>[] = importing
      ? good.map(({ lead }) => ({
          id: newId(),
          created_at: at,
          ...lead,
          ...scored(lead, ctx.weights),
          traffic_provider_id: imp.traffic_provider_id!,
          campaign_id: imp.campaign_id,
          flow_id: ctx.flowId,
          partner_id: null,
          status: 'new',
          reason: null,
          status_updated_at: at,
          cost_cents: 0,
          revenue_cents: 0,
          import_id: imp.id,
        }))
      : [];
    const counts = {
      rows: rows.length,
      good: good.length,
      bad,
      duplicates: duplicates.length,
      imported: leads.length,
    };
    await db.transaction().execute(async (tx) => {
      if (!(await advance(tx, imp.id, imp.state, this.holder, chunk.seq, counts))) throw new Stopped();
      const all: ImportErrorsTable[] = [...errors, ...duplicates].map((e) => ({ import_id: imp.id, ...e }));
      await insertErrors(tx, all);
      await insertKeys(tx, keys);
      await insertLeadRows(tx, leads);
      // What intake writes beside a stored lead: the provider's log fact (rollups are the leads' triggers).
      await recordProviderFacts(
        tx,
        leads.map((l) => receivedFact(l as Parameters<typeof receivedFact>[0])),
      );
    });
    return true;
  }

  /** Intake's blocklist check for a chunk's good rows, in one query: the rows an entry blocks, as bad rows. */
  private async blocked(imp: ImportRow, ctx: Context, good: { row: number; lead: NormalizedLead }[], now: Date) {
    if (!good.length) return [];
    const shapes = await blocklistShapes(this.deps.db);
    if (!shapes.size) return [];
    const secret = await blocklistSecret(this.deps.db);
    const keyed = good.map((g) => ({ ...g, keys: leadKeys(g.lead, shapes, secret) }));
    const all = JSON.stringify([...new Set(keyed.flatMap((g) => g.keys))]);
    const found = await entriesWithKeys(this.deps.db, all, imp.traffic_provider_id!, now.toISOString());
    if (!found.length) return [];
    const byKey = new Map(found.map((e) => [e.match_key, e]));
    const out: RowError[] = [];
    for (const g of keyed) {
      const entry = g.keys.map((k) => byKey.get(k)).find((e) => e !== undefined);
      if (!entry) continue;
      const field = blockedField(entry, g.lead);
      out.push({
        row: g.row,
        field,
        column_name: ctx.mapping[field] ?? null,
        reason: blockedReason(entry),
        value: g.lead[field],
      });
    }
    return out;
  }

  /**
   * Intake's duplicate check (the provider's policy: fields, window, scope) for a chunk's good
   * rows, against existing leads and the file's earlier rows: the rows that pass, the
   * duplicates as bad rows, and the keys the passing rows add.
   */
  private async duplicates(imp: ImportRow, ctx: Context, good: { row: number; lead: NormalizedLead }[], now: Date) {
    const keys: { import_id: string; key: string; row: number }[] = [];
    const duplicates: RowError[] = [];
    if (!ctx.policy || !good.length) return { accepted: good, duplicates, keys };
    const fields = checkedFields(ctx.policy);
    const keyOf = (f: string, lead: NormalizedLead) => `${f}:${lead[f as 'email' | 'phone']}`;
    const seen = await seenKeys(
      this.deps.db,
      imp.id,
      good.flatMap(({ lead }) => fields.map((f) => keyOf(f, lead))),
    );
    const since = windowStart(ctx.policy, now);
    const providerId = ctx.policy.scope === 'provider' ? imp.traffic_provider_id : null;
    const existing = new Map<string, Map<string, string>>();
    const secret = await blocklistSecret(this.deps.db);
    for (const f of fields)
      existing.set(
        f,
        await existingLeads(
          this.deps.db,
          f,
          good.map(({ lead }) => lead[f]),
          since,
          providerId,
          imp.id,
          (v) => contactDigest(f, v, secret),
        ),
      );
    const accepted: typeof good = [];
    for (const g of good) {
      let reason: { field: 'email' | 'phone'; text: string } | null = null;
      for (const f of fields) {
        const lead = existing.get(f)!.get(g.lead[f]);
        const row = seen.get(keyOf(f, g.lead));
        if (lead !== undefined) reason = { field: f, text: `duplicate of lead ${lead} (same ${f})` };
        else if (row !== undefined) reason = { field: f, text: `duplicate of row ${row} (same ${f})` };
        if (reason) break;
      }
      if (reason) {
        duplicates.push({
          row: g.row,
          field: reason.field,
          column_name: ctx.mapping[reason.field] ?? null,
          reason: reason.text,
          value: g.lead[reason.field],
        });
        continue;
      }
      accepted.push(g);
      for (const f of fields) {
        const key = keyOf(f, g.lead);
        seen.set(key, g.row);
        keys.push({ import_id: imp.id, key, row: g.row });
      }
    }
    return { accepted, duplicates, keys };
  }

  /** No chunk left: a dry run is validated (its summary kept); an import is done, its chunks deleted. */
  private async finish(imp: ImportRow) {
    const { db } = this.deps;
    const now = new Date().toISOString();
    if (imp.state === 'validating') {
      const summary = {
        rows: imp.rows_done,
        good: imp.good,
        bad: imp.bad,
        duplicates: imp.duplicates,
        finished_at: now,
      };
      await setState(db, imp.id, ['validating'], 'validated', { dry_run: JSON.stringify(summary), updated_at: now });
      return;
    }
    const finished = await db.transaction().execute(async (tx) => {
      if (!(await setState(tx, imp.id, ['importing'], 'done', { updated_at: now, finished_at: now }))) return false;
      if (imp.mode === 'route')
        await updateImport(tx, imp.id, { injection_id: await this.deps.createInjection(tx, imp) });
      return true;
    });
    if (finished) await deleteWork(db, imp.id); // in batches, outside the transaction (see queries.ts)
  }

  private async fail(imp: ImportRow) {
    const now = new Date().toISOString();
    const error = `stopped by an internal error at row ${imp.rows_done + 1}; the rows before it are ${imp.state === 'importing' ? 'imported' : 'checked'} (see the server log)`;
    if (await setState(this.deps.db, imp.id, [imp.state], 'failed', { error, updated_at: now, finished_at: now }))
      await deleteWork(this.deps.db, imp.id);
  }
}

/** The lead field a blocklist entry matched. */
function blockedField(entry: BlockingEntry, lead: NormalizedLead): keyof NormalizedLead {
  if (entry.kind === 'email' || entry.kind === 'email_domain') return 'email';
  if (entry.kind === 'sub_id')
    return (['sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'] as const).find((f) => lead[f] === entry.value)!;
  return entry.kind;
}

/** An imported lead's fraud flags (those that need no database: velocity is intake's) and its score. */
function scored(lead: NormalizedLead, weights: Weights) {
  const flags = leadFlags(lead, shippedCountryOf);
  return { flags, quality_score: qualityScore(flags, weights) };
}
