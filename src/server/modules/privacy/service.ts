// Privacy use cases (issue 29, item 4): erasure by email or phone, and the log of who viewed
// contacts. What an erasure touches, table by table, is ERASED_TABLES below and the README's
// "Privacy: erasure and the contact-view log".
import { walTruncate, type DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { invalid, type FieldError } from '../../http/errors.js';
import { contactMasker, maskDeep, maskEmail, maskFreeText, maskPhone, type Masker } from '../../privacy/mask.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { insertEntries } from '../quality/blocklist-queries.js';
import { forgetShapes } from '../quality/blocklist-shapes.js';
import { entryKey, protectKey } from '../quality/match-keys.js';
import { blocklistSecret } from '../quality/match-secret.js';
import { contactDigest } from './contact-digests.js';
import {
  contactViewRows,
  deleteKeyedRows,
  eraseLead,
  erasureRows,
  insertContactView,
  insertErasure,
  importHits,
  leadsOfContact,
  purgeContactViews,
  scrubImports,
  scrubTable,
  textHits,
  type ScrubSpec,
} from './queries.js';
import { contactNeedles, likeNeedles, textScrubber } from './scrub.js';

/** How long the contact-view log keeps a row (purged by the hourly intake-keys purge, app.ts). */
export const CONTACT_VIEW_RETENTION_DAYS = 400;

/**
 * The tables whose text an erasure scrubs: found by any spelling of the contacts (LIKE) and, for
 * those with a lead column, every row of an erased lead. The providers' hash-chained log
 * (provider_log) holds no contacts by design (intake's receivedFact) and is never rewritten: its
 * hashes stay verifiable; a fact still pending (not chained yet) is scrubbed like any text.
 */
export const ERASED_TABLES = [
  { table: 'lead_attempts', key: ['id'], text: ['reason', 'response_excerpt'], leadColumn: 'lead_id', byText: true },
  {
    table: 'lead_status_history',
    key: ['id'],
    text: ['sale_status', 'previous_sale_status'],
    leadColumn: 'lead_id',
    byText: true,
  },
  { table: 'events', key: ['id'], text: ['data'], leadColumn: 'lead_id', json: ['data'], byText: true },
  { table: 'event_deliveries', key: ['id'], text: ['last_error'], leadColumn: 'lead_id', byText: true },
  { table: 'event_delivery_tries', key: ['id'], text: ['error', 'response_excerpt'], byText: true },
  { table: 'audit_log', key: ['id'], text: ['details', 'actor_email'], json: ['details'], byText: true },
  { table: 'imports', key: ['id'], text: ['dry_run', 'error'], byText: true },
  { table: 'injection_jobs', key: ['id'], text: ['selection'], json: ['selection'], byText: true },
  { table: 'injection_items', key: ['job_id', 'lead_id'], text: ['reason'], leadColumn: 'lead_id', byText: true },
  { table: 'injection_rules', key: ['id'], text: ['filter'], json: ['filter'], byText: true },
  { table: 'blocklist_entries', key: ['id'], text: ['note'], byText: true },
  { table: 'partner_status_pulls', key: ['partner_id'], text: ['last_error'], byText: true },
  { table: 'provider_log_pending', key: ['id'], text: ['data'], json: ['data'], byText: true },
] as const satisfies readonly ScrubSpec[];

export interface ErasureInput {
  email?: string;
  phone?: string;
  blocklist?: boolean;
  note?: string;
}

/** What an erased subject's blocklist entry shows instead of its value. */
export const ERASED_SUBJECT = 'erased subject';

/** The subject's contacts normalized as the blocklists do (quality/match-keys.ts), or 400 naming each. */
function subjectOf(body: ErasureInput): { email: string | null; phone: string | null } {
  const errors: FieldError[] = [];
  if (body.email === undefined && body.phone === undefined)
    invalid([{ field: 'email', message: 'or phone is required: the contact whose leads are erased' }]);
  let email: string | null = null;
  let phone: string | null = null;
  if (body.email !== undefined) {
    const e = entryKey('email', body.email);
    if ('error' in e) errors.push({ field: 'email', message: e.error });
    else email = e.value;
  }
  if (body.phone !== undefined) {
    const p = entryKey('phone', body.phone);
    if ('error' in p) errors.push({ field: 'phone', message: p.error });
    else phone = p.value;
  }
  if (errors.length) invalid(errors);
  return { email, phone };
}

/**
 * A global entry for each contact asked for that stores no clear value: its key is the HMAC
 * digest intake probes (quality/match-keys.ts protectKey), its value "erased subject". Answers how
 * many were added (an entry of that key already listed globally stays).
 */
async function blocklistSubject(
  db: DB,
  subject: { email: string | null; phone: string | null },
  secret: Buffer,
  erasureId: string,
  operatorId: string,
  now: string,
) {
  const keys = [
    ['email', subject.email],
    ['phone', subject.phone],
  ] as const;
  const rows = keys.flatMap(([kind, value]) => {
    const k = value === null ? null : entryKey(kind, value);
    return k && 'key' in k
      ? [
          {
            id: newId(),
            kind,
            value: ERASED_SUBJECT,
            match_key: protectKey(k.key, secret),
            traffic_provider_id: null,
            expires_at: null,
            note: `erasure ${erasureId}`,
            created_by: operatorId,
            created_at: now,
          },
        ]
      : [];
  });
  return insertEntries(db, rows);
}

const uniq = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => !!x))];

/** One masker (privacy/mask.ts) per pair of contacts: the subject's and each erased lead's. */
export const maskersOf = (pairs: { email: string | null; phone: string | null }[]): Masker[] =>
  pairs.map((p) => contactMasker({ email: p.email ?? '', phone: p.phone ?? '' }));

export const withMask =
  (scrub: (t: string) => string, maskers: Masker[]) =>
  (text: string): string =>
    maskers.reduce((t, m) => m(t), scrub(text));

/** The contacts asked for and the erased leads' own emails and phones. */
const contactsOf = (
  subject: { email: string | null; phone: string | null },
  leads: { email: string; phone: string }[],
) => ({
  emails: uniq([subject.email, ...leads.map((l) => l.email.toLowerCase())]),
  phones: uniq([subject.phone, ...leads.map((l) => l.phone)]),
});

/**
 * Erases every lead carrying the email or the phone and every trace of the contacts (and of
 * those leads' own contacts) the database keeps, in one transaction, with its receipt and audit
 * record (the subject masked). On SQLite the WAL is then checkpointed and truncated.
 */
export async function eraseContact(db: DB, actor: Actor, body: ErasureInput) {
  const subject = subjectOf(body);
  const p = principalOf(actor);
  const now = nowIso();
  const id = newId();
  const masked = [subject.email && maskEmail(subject.email), subject.phone && maskPhone(subject.phone)]
    .filter(Boolean)
    .join(', ');
  const matchKey = await blocklistSecret(db);
  const secret = body.blocklist ? matchKey : null;
  // A lead whose contacts the retention purged is found by their digests, which go too.
  const digests = {
    email: subject.email && contactDigest('email', subject.email, matchKey),
    phone: subject.phone && contactDigest('phone', subject.phone, matchKey),
  };
  // The scans of whole tables for the contacts' spellings run first, outside the transaction (a
  // read: on SQLite intake is not held up); the transaction reads those rows again and scrubs them
  // with every row of the erased leads. A row written meanwhile that quotes the contacts without
  // belonging to an erased lead is the one thing this can miss (README).
  const before = await leadsOfContact(db, subject.email, subject.phone, digests);
  const found = contactsOf(subject, before);
  const needles = likeNeedles(found.emails, found.phones);
  const hits = new Map<string, Awaited<ReturnType<typeof textHits>>>();
  for (const spec of ERASED_TABLES) hits.set(spec.table, await textHits(db, spec, needles));
  const imports = await importHits(db, needles);
  const receipt = await db.transaction().execute(async (tx) => {
    const leads = await leadsOfContact(tx, subject.email, subject.phone, digests);
    const { emails, phones } = contactsOf(subject, leads);
    // Then any other spelling (escaped, grouped digits "+49 151 …") is masked like for a reader
    // without leads:contacts: what is left says nothing that reaches the person.
    const mask = maskersOf([subject, ...leads]);
    const scrub = withMask(textScrubber(contactNeedles(emails, phones)), mask);
    // In an erased lead's own records its names go too.
    const byLead = new Map(
      leads.map((l) => [
        l.id,
        withMask(textScrubber([...contactNeedles(emails, phones), l.first_name, l.last_name]), mask),
      ]),
    );
    const scrubFor = (leadId: string | null) => (leadId && byLead.get(leadId)) || scrub;
    const leadIds = leads.map((l) => l.id);
    const counts: Record<string, number> = { leads: leads.length };
    for (const l of leads) await eraseLead(tx, l, scrubFor(l.id), now);
    for (const spec of ERASED_TABLES)
      counts[spec.table] = await scrubTable(tx, spec, hits.get(spec.table)!, leadIds, scrubFor);
    const [rows, errors] = await scrubImports(tx, imports, scrub);
    counts.import_rows = rows;
    counts.import_errors = errors;
    Object.assign(counts, await deleteKeyedRows(tx, emails, phones, leadIds));
    if (secret) counts.blocklisted = await blocklistSubject(tx, subject, secret, id, p.operator.id, now);
    const row = {
      id,
      created_at: now,
      created_by: p.operator.id,
      created_by_email: p.operator.email,
      subject: masked,
      note: body.note === undefined ? null : scrub(body.note),
      counts: JSON.stringify(counts),
      lead_ids: JSON.stringify(leadIds),
    };
    await insertErasure(tx, row);
    await audit(tx, actor, {
      action: 'privacy.erased',
      target_type: 'privacy_erasure',
      target_id: id,
      details: { subject: masked, leads: leadIds.length, counts, blocklisted: !!secret },
    });
    return row;
  });
  if (secret) forgetShapes(db);
  const walTruncated = await walTruncate(db);
  return { ...erasureView(receipt), wal_truncated: walTruncated };
}

function erasureView(r: {
  id: string;
  created_at: string;
  created_by: string | null;
  created_by_email: string | null;
  subject: string;
  note: string | null;
  counts: string;
  lead_ids: string;
}) {
  return {
    id: r.id,
    created_at: r.created_at,
    created_by: r.created_by,
    created_by_email: r.created_by_email,
    subject: r.subject,
    note: r.note,
    counts: JSON.parse(r.counts) as Record<string, number>,
    lead_ids: JSON.parse(r.lead_ids) as string[],
  };
}

export async function listErasures(db: DB, q: { limit: number; cursor?: string }) {
  const page = await erasureRows(db, q.limit, q.cursor);
  return { data: page.data.map(erasureView), next_cursor: page.next_cursor };
}

/**
 * Records that the actor read contacts unmasked: one lead's detail, or an export (its filters
 * masked: a search by email names the contact). One insert; call only when contacts were shown.
 */
export async function recordContactView(
  db: DB,
  actor: Actor,
  what: { leadId: string } | { exportFilter: unknown },
): Promise<void> {
  const p = principalOf(actor);
  await insertContactView(db, {
    id: newId(),
    at: nowIso(),
    operator_id: p.operator.id,
    operator_email: p.operator.email,
    via: p.via,
    ip: actor.ip,
    kind: 'leadId' in what ? 'lead' : 'export',
    lead_id: 'leadId' in what ? what.leadId : null,
    export_filter: 'leadId' in what ? null : JSON.stringify(maskDeep(what.exportFilter ?? {}, maskFreeText)),
  });
}

/** Deletes contact views older than the retention; answers how many. */
export const purgeOldContactViews = (db: DB) =>
  purgeContactViews(db, new Date(Date.now() - CONTACT_VIEW_RETENTION_DAYS * 86_400_000).toISOString());

export async function listContactViews(
  db: DB,
  q: { limit: number; cursor?: string; operator_id?: string; lead_id?: string },
) {
  const page = await contactViewRows(db, q);
  return {
    data: page.data.map((r) => ({
      id: r.id,
      at: r.at,
      operator_id: r.operator_id,
      operator_email: r.operator_email,
      via: r.via,
      ip: r.ip,
      kind: r.kind,
      lead_id: r.lead_id,
      export_filter: r.export_filter === null ? null : (JSON.parse(r.export_filter) as Record<string, unknown>),
    })),
    next_cursor: page.next_cursor,
  };
}
