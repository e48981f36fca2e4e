import { Readable } from 'node:stream';
import type { Insertable, Kysely } from 'kysely';
import { newId, nowIso } from '../../db/ids.js';
import { providerInScope } from '../../db/record-scope.js';
import type { BlocklistEntriesTable, Database } from '../../db/tables.js';
import { CsvError, CsvReader } from '../../http/csv-reader.js';
import { HttpProblem, conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { maskEmail, maskPhone } from '../../privacy/mask.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { referenced } from '../campaigns/queries.js';
import { canSeeContacts } from '../leads/search.js';
import {
  deleteEntry,
  entryPage,
  entryWithKey,
  findEntry,
  insertEntries,
  patchEntry,
  type EntryRow,
} from './blocklist-queries.js';
import { BLOCK_KINDS, entryKey, protectKey, type BlockKind } from './match-keys.js';
import { blocklistSecret } from './match-secret.js';
import { forgetShapes } from './blocklist-shapes.js';

/** An email or phone as a reader without leads:contacts may see it; other kinds are not contacts. */
const shownValue = (kind: BlockKind, value: string, contacts: boolean) =>
  contacts ? value : kind === 'email' ? maskEmail(value) : kind === 'phone' ? maskPhone(value) : value;

const entryView = (r: EntryRow, contacts: boolean, now: string) => ({
  ...r,
  value: shownValue(r.kind, r.value, contacts),
  active: r.expires_at === null || r.expires_at > now,
});

const scopeOf = (actor: Actor) => principalOf(actor).scope;
const contactsOf = (actor: Actor) => canSeeContacts(principalOf(actor));

export async function listEntries(
  db: Kysely<Database>,
  actor: Actor,
  q: {
    limit: number;
    cursor?: string;
    kind?: BlockKind;
    traffic_provider_id?: string;
    value?: string;
    include_expired: boolean;
  },
) {
  const now = nowIso();
  const contacts = contactsOf(actor);
  // Without leads:contacts a lookup by a whole email or phone would confirm a contact every answer masks.
  const contactKinds = (q.kind ? [q.kind] : (['email', 'phone'] as const)).filter(
    (k) => (k === 'email' || k === 'phone') && q.value !== undefined && 'key' in entryKey(k, q.value),
  );
  if (!contacts && contactKinds.length)
    invalid([
      {
        field: 'value',
        message: `is a whole ${contactKinds[0] === 'email' ? 'email address' : 'phone number'}: looking it up needs the permission leads:contacts`,
      },
    ]);
  // A value is looked up by its key for each kind it could be (or the kind asked for), as stored.
  const secret = q.value === undefined ? null : await blocklistSecret(db);
  const keys =
    q.value === undefined
      ? undefined
      : (q.kind ? [q.kind] : BLOCK_KINDS).flatMap((k) => {
          const e = entryKey(k, q.value!);
          return 'key' in e ? [protectKey(e.key, secret!)] : [];
        });
  const page = await entryPage(
    db,
    { ...q, providerId: q.traffic_provider_id, keys, includeExpired: q.include_expired, now },
    scopeOf(actor),
  );
  return { data: page.data.map((r) => entryView(r, contacts, now)), next_cursor: page.next_cursor };
}

export async function getEntry(db: Kysely<Database>, actor: Actor, id: string) {
  const row = (await findEntry(db, id, scopeOf(actor))) ?? notFound('blocklist entry');
  return entryView(row, contactsOf(actor), nowIso());
}

/** The provider an entry is for: one the caller may name, not archived; a scoped role names one of its own. */
async function providerError(db: Kysely<Database>, actor: Actor, id: string | null): Promise<FieldError | null> {
  const scope = scopeOf(actor);
  if (id === null)
    return scope.trafficProviderIds === null
      ? null
      : { field: 'traffic_provider_id', message: 'is required: your role is limited to some traffic providers' };
  const row = providerInScope(scope, id) ? await referenced(db, 'traffic_providers', id) : undefined;
  if (!row) return { field: 'traffic_provider_id', message: 'no traffic provider with that id' };
  return row.archived_at ? { field: 'traffic_provider_id', message: 'the traffic provider is archived' } : null;
}

const expiryError = (expires: string | null | undefined, field: string, now: string): FieldError | null =>
  expires && new Date(expires).toISOString() <= now ? { field, message: 'must be in the future' } : null;

const storedExpiry = (expires: string | null | undefined) => (expires ? new Date(expires).toISOString() : null);

/** What the audit log keeps of a value: emails and phones masked (audit readers need not see contacts). */
const auditedValue = (kind: BlockKind, value: string) => shownValue(kind, value, false);

export async function addEntry(
  db: Kysely<Database>,
  actor: Actor,
  b: {
    kind: BlockKind;
    value: string;
    traffic_provider_id?: string | null;
    expires_at?: string | null;
    note?: string | null;
  },
) {
  const now = nowIso();
  const providerId = b.traffic_provider_id ?? null;
  const id = newId();
  const secret = await blocklistSecret(db);
  await db.transaction().execute(async (tx) => {
    const key = entryKey(b.kind, b.value);
    const errors = [
      'error' in key ? { field: 'value', message: key.error } : null,
      await providerError(tx, actor, providerId),
      expiryError(b.expires_at, 'expires_at', now),
    ].filter((e): e is FieldError => e !== null);
    if (errors.length || 'error' in key) return invalid(errors);
    const stored = protectKey(key.key, secret);
    const existing = await entryWithKey(tx, stored, providerId);
    if (existing)
      conflict(
        `${key.value} is already listed ${providerId ? 'for this traffic provider' : 'globally'} (entry ${existing.id}).`,
      );
    await insertEntries(tx, [
      {
        id,
        kind: b.kind,
        value: key.value,
        match_key: stored,
        traffic_provider_id: providerId,
        expires_at: storedExpiry(b.expires_at),
        note: b.note?.trim() || null,
        created_by: principalOf(actor).operator.id,
        created_at: now,
      },
    ]);
    await audit(tx, actor, {
      action: 'blocklist.added',
      target_type: 'blocklist_entry',
      target_id: id,
      details: {
        kind: b.kind,
        value: auditedValue(b.kind, key.value),
        traffic_provider_id: providerId,
        expires_at: storedExpiry(b.expires_at),
      },
    });
  });
  forgetShapes(db);
  return getEntry(db, actor, id);
}

export async function updateEntry(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  b: { expires_at?: string | null; note?: string | null },
) {
  await db.transaction().execute(async (tx) => {
    const row = (await findEntry(tx, id, scopeOf(actor))) ?? notFound('blocklist entry');
    const error = expiryError(b.expires_at, 'expires_at', nowIso());
    if (error) invalid([error]);
    const patch = {
      ...(b.expires_at !== undefined ? { expires_at: storedExpiry(b.expires_at) } : {}),
      ...(b.note !== undefined ? { note: b.note?.trim() || null } : {}),
    };
    if (!Object.keys(patch).length) return;
    await patchEntry(tx, id, patch);
    await audit(tx, actor, {
      action: 'blocklist.updated',
      target_type: 'blocklist_entry',
      target_id: id,
      details: {
        kind: row.kind,
        value: auditedValue(row.kind, row.value),
        before: { expires_at: row.expires_at, note: row.note },
        after: patch,
      },
    });
  });
  return getEntry(db, actor, id);
}

export async function removeEntry(db: Kysely<Database>, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    const row = (await findEntry(tx, id, scopeOf(actor))) ?? notFound('blocklist entry');
    await deleteEntry(tx, id);
    await audit(tx, actor, {
      action: 'blocklist.removed',
      target_type: 'blocklist_entry',
      target_id: id,
      details: {
        kind: row.kind,
        value: auditedValue(row.kind, row.value),
        traffic_provider_id: row.traffic_provider_id,
      },
    });
  });
  forgetShapes(db);
}

/** At most this many data rows in one bulk add; at most this many bad rows named in its 400. */
export const IMPORT_MAX_ROWS = 100_000;
const NAMED_ERRORS = 100;
// A date (midnight UTC) or a date-time with its zone: a time without one would be the server's local time.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;
const COLUMNS = ['kind', 'value', 'traffic_provider_id', 'expires_at', 'note'] as const;

/**
 * POST /api/blocklists/import: a CSV of entries, all or nothing. Every row is checked first; any
 * bad row answers 400 naming it (the first 100) and nothing is added. Rows already listed in
 * their scope (or twice in the file) are left as they are and counted.
 */
export async function importEntries(
  db: Kysely<Database>,
  actor: Actor,
  body: unknown,
  defaults: { kind?: BlockKind; traffic_provider_id?: string; expires_at?: string },
  maxBytes: number,
) {
  if (!(body instanceof Readable))
    throw new HttpProblem(415, 'unsupported_media_type', 'Send the file as the body with Content-Type: text/csv.');
  const now = nowIso();
  const reader = new CsvReader();
  const rows: string[][] = [];
  let bytes = 0;
  try {
    for await (const piece of body) {
      bytes += (piece as Buffer).length;
      if (bytes > maxBytes)
        throw new HttpProblem(
          413,
          'payload_too_large',
          `The file is larger than ${maxBytes} bytes; nothing was added.`,
        );
      rows.push(...reader.push(piece as Buffer));
      if (rows.length > IMPORT_MAX_ROWS)
        invalid([{ field: 'body', message: `has more than ${IMPORT_MAX_ROWS} rows; split the file` }]);
    }
    rows.push(...reader.end());
  } catch (err) {
    if (err instanceof CsvError)
      invalid([
        { field: err.row ? `row ${err.row}` : 'header', message: `${err.message} (not CSV); nothing was added` },
      ]);
    throw err;
  }
  const columns = (reader.columns ?? []).map((c) => c.trim().toLowerCase());
  const at = Object.fromEntries(COLUMNS.map((c) => [c, columns.indexOf(c)])) as Record<
    (typeof COLUMNS)[number],
    number
  >;
  const headerErrors: FieldError[] = [];
  if (at.value < 0) headerErrors.push({ field: 'header', message: 'has no value column' });
  if (at.kind < 0 && !defaults.kind)
    headerErrors.push({ field: 'header', message: 'has no kind column; add one or pass ?kind=' });
  if (headerErrors.length) invalid(headerErrors);

  const providers = new Map<string, FieldError | null>();
  const errors: FieldError[] = [];
  const entries: Insertable<BlocklistEntriesTable>[] = [];
  const operatorId = principalOf(actor).operator.id;
  const secret = await blocklistSecret(db);
  const bad = (row: number, column: string, message: string) => {
    if (errors.length < NAMED_ERRORS) errors.push({ field: `row ${row} ${column}`, message });
    else if (errors.length === NAMED_ERRORS)
      errors.push({ field: 'body', message: 'has more bad rows (the first 100 are named)' });
  };
  const cell = (r: string[], c: (typeof COLUMNS)[number]) => (at[c] >= 0 ? (r[at[c]] ?? '').trim() : '');
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const n = i + 1;
    const kind = (cell(r, 'kind') || defaults.kind || '') as BlockKind;
    if (!BLOCK_KINDS.includes(kind)) {
      bad(n, 'kind', `must be one of ${BLOCK_KINDS.join(', ')}`);
      continue;
    }
    const key = entryKey(kind, cell(r, 'value'));
    if ('error' in key) bad(n, 'value', key.error);
    const providerId = cell(r, 'traffic_provider_id') || defaults.traffic_provider_id || null;
    const pKey = providerId ?? '';
    if (!providers.has(pKey)) providers.set(pKey, await providerError(db, actor, providerId));
    const pError = providers.get(pKey);
    if (pError) bad(n, 'traffic_provider_id', pError.message);
    const expiresText = cell(r, 'expires_at') || defaults.expires_at || '';
    const expires = expiresText && DATE_TIME.test(expiresText) ? new Date(expiresText) : null;
    if (expiresText && (!expires || Number.isNaN(expires.getTime())))
      bad(
        n,
        'expires_at',
        'is not a date (2027-01-31, midnight UTC) or a date-time with its zone (2027-01-31T18:00:00Z)',
      );
    else if (expires && expires.toISOString() <= now) bad(n, 'expires_at', 'must be in the future');
    const note = cell(r, 'note');
    if (note.length > 500) bad(n, 'note', 'must be at most 500 characters');
    if ('error' in key || errors.length) continue;
    entries.push({
      id: newId(),
      kind,
      value: key.value,
      match_key: protectKey(key.key, secret),
      traffic_provider_id: providerId,
      expires_at: expires && expires.toISOString(),
      note: note || null,
      created_by: operatorId,
      created_at: now,
    });
  }
  if (errors.length) invalid(errors);
  const added = await db.transaction().execute(async (tx) => {
    const n = await insertEntries(tx, entries);
    await audit(tx, actor, {
      action: 'blocklist.imported',
      target_type: 'blocklist',
      details: {
        rows: rows.length,
        added: n,
        kinds: Object.fromEntries(BLOCK_KINDS.map((k) => [k, entries.filter((e) => e.kind === k).length])),
      },
    });
    return n;
  });
  forgetShapes(db);
  return { rows: rows.length, added, already_listed: rows.length - added };
}
