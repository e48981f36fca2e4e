// Scheduled retention (issue 29, item 4): contacts of leads older than N days purged, keeping keyed
// digests for the duplicate checks; whole leads older than M days deleted, still counted in the
// reports. The settings are set by admins from a session (retention-routes.ts); the work is the
// `retention` job (jobs/retention.ts), one process at a time, in short transactions that yield to
// live requests between them. README "Privacy: retention".
import { walSettle, walTruncate, type DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { readSetting, writeSetting } from '../../db/settings.js';
import { audit, type Actor } from '../audit/service.js';
import { blocklistSecret } from '../quality/match-secret.js';
import { contactDigests } from './contact-digests.js';
import { eraseLead, scrubTable } from './queries.js';
import {
  addToRun,
  deleteLeads,
  failAbandonedRuns,
  finishRun,
  insertRun,
  latestRuns,
  leadsToDelete,
  leadsToPurge,
  type Cursor,
} from './retention-queries.js';
import { contactNeedles, textScrubber } from './scrub.js';
import { ERASED_TABLES, maskersOf, withMask } from './service.js';

export const RETENTION_SETTING = 'retention';
/** Where the contacts purge has got to (retention-queries.ts Cursor). */
const CURSOR_SETTING = 'retention_cursor';

export interface RetentionSettings {
  /** Purge the contacts of leads received more than this many days ago; null: keep them. */
  contacts_days: number | null;
  /** Delete leads received more than this many days ago; null: keep them. */
  leads_days: number | null;
}

const KEEP: RetentionSettings = { contacts_days: null, leads_days: null };

/**
 * The most leads per transaction. On SQLite a batch holds the event loop and the one writer, so
 * each batch is sized from the last one's time per lead to take about SLICE_MS: intake waits that
 * long at most behind one (bench/RESULTS.md "Retention at 1,000,000 leads").
 */
export const RETENTION_BATCH = 50;
/** What one batch should take. */
const SLICE_MS = 10;
/** The longest a batch waits for the last one to be written back (RunOptions.settle). */
const SETTLE_WAIT_MS = 2_000;
/** The longest a batch waits for live requests to be answered before it goes anyway. */
const QUIET_WAIT_MS = 100;
/** A run stops after this long; the next goes on where it stopped. */
export const RUN_BUDGET_MS = 5 * 60_000;

/** The tables scrubbed by lead (all have an index on it): a purged lead's own records. */
const LEAD_TABLES = ERASED_TABLES.filter((t) => 'leadColumn' in t && t.table !== 'event_deliveries');

const DAY_MS = 86_400_000;

export const readRetention = (db: DB) => readSetting<RetentionSettings>(db, RETENTION_SETTING, KEEP);

/** The settings, how often this server's job applies them (null: never here), the latest runs. */
export async function getRetention(db: DB, everyMs: number) {
  const [settings, runs] = await Promise.all([readRetention(db), latestRuns(db, 10)]);
  return { ...settings, interval_seconds: everyMs > 0 ? Math.max(1, Math.round(everyMs / 1000)) : null, runs };
}

/** Sets what is kept how long (the admin role from a session: routes); audited. Answers the settings and runs. */
export async function updateRetention(db: DB, actor: Actor, body: RetentionSettings, everyMs: number) {
  await db.transaction().execute(async (tx) => {
    const before = await readRetention(tx);
    const after = { contacts_days: body.contacts_days, leads_days: body.leads_days };
    await writeSetting(tx, RETENTION_SETTING, after);
    await audit(tx, actor, { action: 'privacy.retention_updated', details: { before, after } });
  });
  return getRetention(db, everyMs);
}

export interface RunOptions {
  now?: Date;
  /** Rests, then waits until no live request is being answered, or the most given (http/live-requests.ts). */
  quiet?: (maxWaitMs: number, restMs?: number) => Promise<void>;
  /** Resolves once the database has written back what the last batch wrote; default walSettle (db/database.ts). */
  settle?: (maxWaitMs: number) => Promise<void>;
  batch?: number;
  budgetMs?: number;
}

/**
 * One run: deletes the leads past leads_days, then purges the contacts of those past
 * contacts_days, a batch per transaction, until done or the budget is spent. Records a run only
 * when there was work. Answers the run's counts, or null when there was nothing to do.
 */
export async function runRetention(db: DB, opts: RunOptions = {}) {
  const settings = await readRetention(db);
  const now = opts.now ?? new Date();
  const batch = opts.batch ?? RETENTION_BATCH;
  const until = Date.now() + (opts.budgetMs ?? RUN_BUDGET_MS);
  const before = (days: number | null) =>
    days === null ? null : new Date(now.getTime() - days * DAY_MS).toISOString();
  const leadsBefore = before(settings.leads_days);
  const contactsBefore = before(settings.contacts_days);
  let cursor = await readSetting<Cursor | null>(db, CURSOR_SETTING, null);
  const due =
    (leadsBefore !== null && (await leadsToDelete(db, leadsBefore, 1)).length > 0) ||
    (contactsBefore !== null && (await leadsToPurge(db, contactsBefore, cursor, 1)).length > 0);
  if (!due) return null;

  const at = nowIso();
  await failAbandonedRuns(db, at);
  const run = { id: newId(), contacts: 0, leads: 0 };
  await insertRun(db, {
    id: run.id,
    started_at: at,
    updated_at: at,
    finished_at: null,
    state: 'running',
    contacts_before: contactsBefore,
    leads_before: leadsBefore,
    error: null,
  });
  const secret = await blocklistSecret(db);
  try {
    // Deletion first: a lead about to be deleted needs no purge.
    // Before each batch the server rests as long as the last batch took (live requests keep at
    // least half of the event loop) and waits for the requests in flight to be answered and for
    // the last batch to be written back (settle: on SQLite the purge wrote the log faster than
    // the checkpointer copied it back, and intake's commits waited behind the grown log). Each
    // batch is sized to take about SLICE_MS, from the last one's time per lead.
    const settle = opts.settle ?? ((ms: number) => walSettle(db, ms));
    let took = 0;
    let size = Math.min(batch, 10);
    const batchOf = async (work: (tx: DB, size: number) => Promise<number>): Promise<boolean> => {
      await Promise.all([settle(SETTLE_WAIT_MS), opts.quiet?.(QUIET_WAIT_MS, took)]);
      const t0 = performance.now();
      const n = await db.transaction().execute((tx) => work(tx, size));
      took = performance.now() - t0;
      const more = n === size;
      // At most doubled: a batch of leads already erased (passed over) is quick.
      if (n > 0) size = Math.max(1, Math.min(batch, size * 2, Math.round((SLICE_MS * n) / Math.max(took, 0.1))));
      return more;
    };
    for (let more = leadsBefore !== null; more && Date.now() < until;)
      more = await batchOf(async (tx, limit) => {
        const ids = await leadsToDelete(tx, leadsBefore!, limit);
        const n = await deleteLeads(tx, ids);
        run.leads += n;
        await addToRun(tx, run.id, { contacts: 0, leads: n }, nowIso());
        return ids.length;
      });
    for (let more = contactsBefore !== null; more && Date.now() < until;)
      more = await batchOf(async (tx, limit) => {
        const leads = await leadsToPurge(tx, contactsBefore!, cursor, limit);
        const n = await purgeContacts(
          tx,
          leads.filter((l) => l.erased_at === null),
          secret,
        );
        run.contacts += n;
        if (leads.length) {
          const last = leads[leads.length - 1];
          cursor = { created_at: last.created_at, id: last.id };
          await writeSetting(tx, CURSOR_SETTING, cursor);
        }
        await addToRun(tx, run.id, { contacts: n, leads: 0 }, nowIso());
        return leads.length;
      });
    await finishRun(db, run.id, 'done', nowIso(), null);
  } catch (err) {
    await finishRun(db, run.id, 'failed', nowIso(), (err as Error).message).catch(() => undefined);
    throw err;
  }
  // SQLite: the pages the purge overwrote (secure_delete zeroes freed ones) leave the WAL too.
  await walTruncate(db);
  return run;
}

type PurgedLead = Awaited<ReturnType<typeof leadsToPurge>>[number];

/**
 * In the batch's transaction: each lead's names, email, phone and IP replaced as an erasure does
 * (erased_at set), its email and phone kept as digests; every spelling of them (and its names)
 * scrubbed from its attempts, status history, events and re-injection items. Answers how many.
 */
async function purgeContacts(tx: DB, leads: PurgedLead[], secret: Buffer): Promise<number> {
  if (!leads.length) return 0;
  const now = nowIso();
  const scrubbers = new Map(
    leads.map((l) => [
      l.id,
      withMask(
        textScrubber([...contactNeedles([l.email.toLowerCase()], [l.phone]), l.first_name, l.last_name]),
        maskersOf([l]),
      ),
    ]),
  );
  const identity = (t: string) => t;
  for (const l of leads) await eraseLead(tx, l, scrubbers.get(l.id)!, now, contactDigests(l, secret));
  const ids = leads.map((l) => l.id);
  for (const spec of LEAD_TABLES) await scrubTable(tx, spec, [], ids, (id) => (id && scrubbers.get(id)) || identity);
  return leads.length;
}
