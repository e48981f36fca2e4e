import { sql, type Insertable, type Kysely } from 'kysely';
import { containsText } from '../../db/like.js';
import type { ContactViewsTable, Database, PrivacyErasuresTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { deleteEntry } from '../quality/blocklist-queries.js';
import { ERASED, scrubJson } from './scrub.js';

type DB = Kysely<Database>;
// The scrub walks many tables by name with the same steps; their rows are read as plain records.
type AnyDB = Kysely<any>;

const CHUNK = 500;
const chunks = <T>(xs: T[]) =>
  Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

/** What an erasure (or the retention's purge) reads of a lead: eraseLead's input. */
export const ERASED_LEAD_COLUMNS = [
  'id',
  'email',
  'phone',
  'first_name',
  'last_name',
  'reason',
  'autologin_url',
  'sale_status',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;

/** The leads that carry the email or the phone (leads_email_created, leads_phone_created) or their digests. */
export async function leadsOfContact(
  db: DB,
  email: string | null,
  phone: string | null,
  digests: { email: string | null; phone: string | null },
) {
  // Leads whose contacts the retention purged keep only their digests (contact-digests.ts).
  const probes = [
    ['email', email],
    ['phone', phone],
    ['email_digest', digests.email],
    ['phone_digest', digests.phone],
  ] as const;
  const rows = [];
  for (const [column, value] of probes)
    if (value)
      rows.push(...(await db.selectFrom('leads').select(ERASED_LEAD_COLUMNS).where(column, '=', value).execute()));
  return [...new Map(rows.map((r) => [r.id, r])).values()];
}

export type ErasedLead = Awaited<ReturnType<typeof leadsOfContact>>[number];

/**
 * The lead's contacts and names replaced, its other partner texts scrubbed, erased_at set; its
 * contacts' digests kept when given (the retention's purge, for duplicate checks), else none.
 */
export async function eraseLead(
  db: DB,
  lead: ErasedLead,
  scrub: (t: string) => string,
  now: string,
  digests: { email: string | null; phone: string | null } = { email: null, phone: null },
) {
  const s = (t: string | null) => (t === null ? null : scrub(t));
  await db
    .updateTable('leads')
    .set({
      first_name: ERASED,
      last_name: '',
      email: '',
      phone: '',
      ip: '',
      reason: s(lead.reason),
      autologin_url: s(lead.autologin_url),
      sale_status: s(lead.sale_status),
      funnel: s(lead.funnel),
      sub_id1: s(lead.sub_id1),
      sub_id2: s(lead.sub_id2),
      sub_id3: s(lead.sub_id3),
      sub_id4: s(lead.sub_id4),
      sub_id5: s(lead.sub_id5),
      erased_at: now,
      email_digest: digests.email,
      phone_digest: digests.phone,
    })
    .where('id', '=', lead.id)
    .execute();
}

export interface ScrubSpec {
  table: string;
  /** The columns that identify a row. */
  key: readonly string[];
  /** The text columns scrubbed. */
  text: readonly string[];
  /** Rows of these leads are scrubbed whatever their text holds (with the lead fields in JSON). */
  leadColumn?: string;
  /** Those of the text columns that hold JSON (scrubbed value by value). */
  json?: readonly string[];
  /** Whether rows are also found anywhere by their text (else only by leadColumn). */
  byText: boolean;
}

type Row = Record<string, unknown>;

/**
 * The rows of a table whose text holds a spelling (LIKE, both engines; a scan of the table): their
 * key columns. Run before the erasure's transaction, so that the scan (seconds on millions of rows)
 * holds no write lock: on SQLite intake goes on meanwhile.
 */
export async function textHits(db: DB, spec: ScrubSpec, needles: string[]): Promise<Row[]> {
  if (!spec.byText || !needles.length) return [];
  return (db as unknown as AnyDB)
    .selectFrom(spec.table)
    .select([...spec.key])
    .where((eb) => eb.or(spec.text.flatMap((c) => needles.map((n) => containsText(sql.ref(c), n)))))
    .execute();
}

/**
 * In the erasure's transaction: the rows found by textHits (read again by their key) and every
 * row of the erased leads have their text columns scrubbed; those that changed are written back.
 * Answers how many.
 */
export async function scrubTable(
  db: DB,
  spec: ScrubSpec,
  hits: Row[],
  leadIds: string[],
  scrubFor: (leadId: string | null) => (t: string) => string,
): Promise<number> {
  const any = db as unknown as AnyDB;
  const found = new Map<string, Row>();
  const keyOf = (r: Row) => spec.key.map((k) => String(r[k])).join('\u0000');
  const cols = [...new Set([...spec.key, ...spec.text, ...(spec.leadColumn ? [spec.leadColumn] : [])])];
  for (const hit of hits) {
    let q = any.selectFrom(spec.table).select(cols);
    for (const k of spec.key) q = q.where(k, '=', hit[k]);
    const r = (await q.executeTakeFirst()) as Row | undefined;
    if (r) found.set(keyOf(r), r);
  }
  if (spec.leadColumn)
    for (const ids of chunks(leadIds)) {
      const rows = await any.selectFrom(spec.table).select(cols).where(spec.leadColumn, 'in', ids).execute();
      for (const r of rows) found.set(keyOf(r), r);
    }
  let changed = 0;
  for (const r of found.values()) {
    const leadId = spec.leadColumn ? ((r[spec.leadColumn] as string | null) ?? null) : null;
    const ours = leadId !== null && leadIds.includes(leadId);
    const scrub = scrubFor(ours ? leadId : null);
    const set: Record<string, string> = {};
    for (const c of spec.text) {
      const v = r[c];
      if (typeof v !== 'string') continue;
      const out = spec.json?.includes(c) ? scrubJson(v, scrub, ours) : scrub(v);
      if (out !== v) set[c] = out;
    }
    if (!Object.keys(set).length) continue;
    let q = any.updateTable(spec.table).set(set);
    for (const k of spec.key) q = q.where(k, '=', r[k]);
    await q.execute();
    changed++;
  }
  return changed;
}

/** A CSV import's stored chunks and bad-row records holding a spelling (scans, before the transaction). */
export async function importHits(db: DB, needles: string[]) {
  if (!needles.length) return { chunks: [], errors: [] };
  const chunks = await db
    .selectFrom('import_chunks')
    .select(['import_id', 'seq'])
    .where((eb) => eb.or(needles.map((n) => containsText(eb.ref('data'), n))))
    .execute();
  const errors = await db
    .selectFrom('import_errors')
    .select(['import_id', 'row', 'field'])
    .where((eb) => eb.or(needles.map((n) => containsText(eb.ref('value'), n))))
    .execute();
  return { chunks, errors };
}

/**
 * In the transaction: every stored CSV row holding a spelling has all its cells blanked, and the
 * bad-row records of those rows (or holding a spelling) are deleted. Answers [rows, errors].
 */
export async function scrubImports(db: DB, hits: Awaited<ReturnType<typeof importHits>>, scrub: (t: string) => string) {
  let rows = 0;
  let errors = 0;
  for (const h of hits.chunks) {
    const c = await db
      .selectFrom('import_chunks')
      .select(['first_row', 'data'])
      .where('import_id', '=', h.import_id)
      .where('seq', '=', h.seq)
      .executeTakeFirst();
    if (!c) continue;
    const data = JSON.parse(c.data) as unknown[][];
    const hit: number[] = [];
    const out = data.map((cells, i) => {
      if (!cells.some((cell) => typeof cell === 'string' && scrub(cell) !== cell)) return cells;
      hit.push(c.first_row + i);
      return cells.map(() => '');
    });
    if (!hit.length) continue;
    rows += hit.length;
    await db
      .updateTable('import_chunks')
      .set({ data: JSON.stringify(out) })
      .where('import_id', '=', h.import_id)
      .where('seq', '=', h.seq)
      .execute();
    const gone = await db
      .deleteFrom('import_errors')
      .where('import_id', '=', h.import_id)
      .where('row', 'in', hit)
      .executeTakeFirst();
    errors += Number(gone.numDeletedRows);
  }
  for (const e of hits.errors) {
    const gone = await db
      .deleteFrom('import_errors')
      .where('import_id', '=', e.import_id)
      .where('row', '=', e.row)
      .where('field', '=', e.field)
      .executeTakeFirst();
    errors += Number(gone.numDeletedRows);
  }
  return [rows, errors] as const;
}

/** Rows keyed by the contacts themselves: deleted. Answers the counts per table. */
export async function deleteKeyedRows(db: DB, emails: string[], phones: string[], leadIds: string[]) {
  const n = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  const keys = [...emails.map((e) => `email:${e}`), ...phones.map((p) => `phone:${p}`)];
  const counts: Record<string, number> = {};
  counts.import_keys = keys.length
    ? n(await db.deleteFrom('import_keys').where('key', 'in', keys).executeTakeFirstOrThrow())
    : 0;
  counts.login_failures = emails.length
    ? n(
        await db
          .deleteFrom('login_failures')
          .where(sql<string>`lower(email)`, 'in', emails)
          .executeTakeFirstOrThrow(),
      )
    : 0;
  const velocityKeys = phones.map((p) => `phone:${p}`);
  let velocity = velocityKeys.length
    ? n(await db.deleteFrom('lead_velocity').where('key', 'in', velocityKeys).executeTakeFirstOrThrow())
    : 0;
  let intake = 0;
  let opens = 0;
  for (const ids of chunks(leadIds)) {
    velocity += n(await db.deleteFrom('lead_velocity').where('lead_id', 'in', ids).executeTakeFirstOrThrow());
    intake += n(await db.deleteFrom('intake_requests').where('lead_id', 'in', ids).executeTakeFirstOrThrow());
    const o = await db
      .updateTable('autologin_opens')
      .set({ ip: '', user_agent: '' })
      .where('lead_id', 'in', ids)
      .executeTakeFirstOrThrow();
    opens += Number(o.numUpdatedRows);
  }
  counts.lead_velocity = velocity;
  counts.intake_requests = intake;
  counts.autologin_opens = opens;
  // Blocklist entries of these very values (their audit entries are scrubbed with the audit log).
  const entries = await db
    .selectFrom('blocklist_entries')
    .select('id')
    .where((eb) =>
      eb.or([
        ...(emails.length ? [eb.and([eb('kind', '=', 'email'), eb('value', 'in', emails)])] : []),
        ...(phones.length ? [eb.and([eb('kind', '=', 'phone'), eb('value', 'in', phones)])] : []),
      ]),
    )
    .execute();
  for (const e of entries) await deleteEntry(db, e.id);
  counts.blocklist_entries = entries.length;
  return counts;
}

export const insertErasure = (db: DB, row: Insertable<PrivacyErasuresTable>) =>
  db.insertInto('privacy_erasures').values(row).execute();

export async function erasureRows(db: DB, limit: number, cursor: string | undefined) {
  const after = decodeCursor(cursor, ['created_at', 'id'] as const);
  let q = db.selectFrom('privacy_erasures').selectAll();
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.created_at),
        eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)]),
      ]),
    );
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return pageOf(rows, limit, (r) => ({ created_at: r.created_at, id: r.id }));
}

export const insertContactView = (db: DB, row: Insertable<ContactViewsTable>) =>
  db.insertInto('contact_views').values(row).execute();

export async function contactViewRows(
  db: DB,
  f: { limit: number; cursor?: string; operator_id?: string; lead_id?: string },
) {
  const after = decodeCursor(f.cursor, ['at', 'id'] as const);
  let q = db.selectFrom('contact_views').selectAll();
  if (f.operator_id !== undefined) q = q.where('operator_id', '=', f.operator_id);
  if (f.lead_id !== undefined) q = q.where('lead_id', '=', f.lead_id);
  if (after)
    q = q.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
  const rows = await q
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit + 1)
    .execute();
  return pageOf(rows, f.limit, (r) => ({ at: r.at, id: r.id }));
}

/** Contact views recorded before `before`: deleted in batches; answers how many. */
export async function purgeContactViews(db: DB, before: string): Promise<number> {
  let total = 0;
  for (;;) {
    const old = await db.selectFrom('contact_views').select('id').where('at', '<', before).limit(1000).execute();
    if (!old.length) return total;
    await db
      .deleteFrom('contact_views')
      .where(
        'id',
        'in',
        old.map((r) => r.id),
      )
      .execute();
    total += old.length;
    if (old.length < 1000) return total;
  }
}
