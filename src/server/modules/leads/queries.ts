import { leadOpens } from '../autologin/service.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import { fromJson, jsonArrayFrom } from '../../db/json.js';
import { PREPARED } from '../../db/database.js';
import type { Database, LeadAttemptsTable, LeadsTable, LeadStatusHistoryTable } from '../../db/tables.js';
import type { Skip } from '../../distribution/skips.js';
import { namesOf } from '../../db/names.js';
import { rowInScope, type DataScope } from '../../db/scope.js';
import { contactMasker } from '../../privacy/mask.js';
import { names, type LeadNames } from './search-queries.js';
import { maskFields, toLead } from './view.js';

// One lead: its detail (names, attempts, history, opens), and the checks and claim a redelivery
// or a job makes. A lead's view with contacts masked is view.ts; the Leads table's search is
// search-queries.ts.

type DB = Kysely<Database>;

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
// GET /api/leads/{id}, the API's hottest read for scripts: the lead, its names and its
// attempts (as a JSON array) in one statement, built once (db/compiled.ts). One round trip on
// PostgreSQL; on SQLite a statement's fixed cost is most of a point read's.
const leadWithAttempts = compiledOnce((db: DB, id: string) =>
  db
    .selectFrom('leads as l')
    .selectAll('l')
    .select(names)
    .select((eb) => {
      const attempts = eb
        .selectFrom('lead_attempts as a')
        .select((e) => [
          'a.id',
          'a.attempt_no',
          'a.partner_id',
          e.selectFrom('partners as p').select('p.name').whereRef('p.id', '=', 'a.partner_id').as('partner_name'),
          'a.requested_at',
          'a.duration_ms',
          'a.http_status',
          'a.outcome',
          'a.reason',
          'a.response_excerpt',
          'a.injection_id',
        ])
        .whereRef('a.lead_id', '=', 'l.id');
      return jsonArrayFrom(db, attempts).as('attempts');
    })
    .select((eb) =>
      jsonArrayFrom(
        db,
        eb
          .selectFrom('lead_status_history as h')
          .select(['h.id', 'h.at', 'h.source', 'h.sale_status', 'h.previous_sale_status', 'h.ftd_at'])
          .whereRef('h.lead_id', '=', 'l.id'),
      ).as('status_history'),
    )
    .where('l.id', '=', id)
    .modifyEnd(sql.raw(PREPARED)),
);

type AttemptRow = Omit<Selectable<LeadAttemptsTable>, 'lead_id'> & { partner_name: string | null };

type HistoryRow = Omit<Selectable<LeadStatusHistoryTable>, 'lead_id'>;

/** Every column of the lead (a search page's LeadRow carries fewer), with its names. */
type StoredLead = Selectable<LeadsTable> & LeadNames;

/** A lead with its names, its attempts in order (attempt, time, id) and its status history (oldest first), or undefined. */
export async function findLead(
  db: DB,
  id: string,
): Promise<
  (StoredLead & { attempts: Omit<AttemptRow, 'id'>[]; status_history: Omit<HistoryRow, 'id'>[] }) | undefined
> {
  const [row] = await leadWithAttempts(db, id);
  if (!row) return undefined;
  // In order here: an aggregate does not promise its subquery's order (db/json.ts).
  const attempts = fromJson(row.attempts) as AttemptRow[];
  attempts.sort((a, b) => a.attempt_no - b.attempt_no || cmp(a.requested_at, b.requested_at) || cmp(a.id, b.id));
  const history = fromJson(row.status_history) as HistoryRow[];
  history.sort((a, b) => Number(a.id) - Number(b.id));
  return {
    ...(row as StoredLead),
    attempts: attempts.map(({ id: _, ...a }) => a),
    status_history: history.map(({ id: _, ...h }) => h),
  };
}

type StoredVerdict = Omit<Skip, 'name'>;

/** Why the lead's flow's other partners were not offered it (route.ts, verdictsJson), with their names now. */
async function verdictsOf(db: DB, json: string | null, scope: DataScope) {
  if (json === null) return [];
  const verdicts = (JSON.parse(json) as StoredVerdict[]).filter((v) => partnerInScope(scope, v.partner_id));
  const names = await namesOf(db, 'partner', [...new Set(verdicts.map((v) => v.partner_id))]);
  return verdicts.map((v) => ({
    partner_id: v.partner_id,
    partner_name: names.get(v.partner_id) ?? null,
    verdict: v.verdict,
    reason: v.reason,
    cap: v.cap ?? null,
  }));
}

/** A partner-scoped reader sees only its partners' attempts and verdicts on a lead it may read. */
const partnerInScope = (scope: DataScope, partnerId: string) =>
  scope.partnerIds === null || scope.partnerIds.includes(partnerId);

/** The lead in full, or null when there is none or it is out of the reader's scope (404 alike). */
export async function leadDetail(db: DB, id: string, contacts: boolean, scope: DataScope) {
  const row = await findLead(db, id);
  if (!row || !rowInScope(scope, row)) return null;
  const { attempts, status_history } = row;
  const mask = contacts ? null : contactMasker(row);
  return {
    ...toLead(row, contacts, mask),
    import_id: row.import_id,
    erased_at: row.erased_at ?? null,
    verdicts: await verdictsOf(db, row.verdicts, scope),
    autologin_opens: await leadOpens(db, row.id, row.country, contacts),
    // A sale status is the partner's text: it may quote the contacts too.
    status_history: mask ? status_history.map((h) => maskFields(h, mask)) : status_history,
    // The reason and the excerpt quote the partner's answer, which may echo the contacts back.
    attempts: attempts
      .filter((a) => partnerInScope(scope, a.partner_id))
      .map((a) => {
        const attempt = { ...a, partner_name: a.partner_name ?? null };
        return mask ? maskFields(attempt, mask) : attempt;
      }),
  };
}

/** A lead's status, or undefined when there is no such lead. */
export const leadStatus = (db: DB, id: string) =>
  db
    .selectFrom('leads')
    .select(['id', 'status', 'country', 'traffic_provider_id', 'partner_id', 'erased_at'])
    .where('id', '=', id)
    .executeTakeFirst();

export const isLiveFlow = async (db: DB, id: string) =>
  !!(await db
    .selectFrom('flows')
    .select('id')
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .executeTakeFirst());

/** The countries a partner takes (empty: every one), or null when it does not exist or is archived. */
export const livePartnerCountries = async (db: DB, id: string): Promise<string[] | null> => {
  const row = await db
    .selectFrom('partners')
    .select('countries')
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .executeTakeFirst();
  return row ? (JSON.parse(row.countries) as string[]) : null;
};

/**
 * Moves a rejected, failed or new (never sent) lead to pending under a short claim (`claimMs`,
 * until the engine's own lease takes over); false when it is none of those any more.
 */
export async function claimForRedelivery(db: DB, id: string, now: number, claimMs: number): Promise<boolean> {
  const claimed = await db
    .updateTable('leads')
    .set({
      status: 'pending',
      reason: null,
      lease_until: new Date(now + claimMs).toISOString(),
      status_updated_at: new Date(now).toISOString(),
    })
    .where('id', '=', id)
    // new: stored and never sent (a CSV import's lead, sent by its re-injection job: modules/imports).
    .where('status', 'in', ['rejected', 'failed', 'new'])
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) > 0;
}
