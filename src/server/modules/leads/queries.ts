import { leadOpens } from '../autologin/service.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import { fromJson, jsonArrayFrom } from '../../db/json.js';
import { PREPARED } from '../../db/database.js';
import type { Database, LeadAttemptsTable, LeadsTable, LeadStatusHistoryTable } from '../../db/tables.js';
import type { Skip } from '../../distribution/skips.js';
import { namesOf } from '../../db/names.js';
import { rowInScope, type DataScope } from '../../db/scope.js';
import { contactMasker, maskEmail, maskPhone, type Masker } from '../../privacy/mask.js';
import { names, type LeadNames, type LeadRow } from './search-queries.js';
import { flagNames } from '../quality/flags.js';

// One lead: its detail (names, attempts, history, opens), its view with contacts masked for
// readers without leads:contacts, and the checks and claim a redelivery or a job makes.
// The Leads table's search is search-queries.ts.

type DB = Kysely<Database>;
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

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const money = (cents: number) => Number(cents) / 100;

/**
 * Fields that never hold a lead's contacts: ids, times, enums, checked values (the IP, the
 * country) and the names an operator gave partners, providers, campaigns and flows. Every other
 * text is masked; a new field is masked until it is listed here.
 */
const NO_CONTACTS = new Set([
  'id',
  'created_at',
  'country',
  'ip',
  'traffic_provider_id',
  'traffic_provider_name',
  'campaign_id',
  'campaign_name',
  'flow_id',
  'flow_name',
  'partner_id',
  'partner_name',
  'status',
  'delivered_at',
  'ftd_at',
  'status_updated_at',
  'email',
  'phone',
  'attempt_no',
  'requested_at',
  'outcome',
]);

/** Every text field of `view` that may hold contacts, through `mask` (in place). */
function maskFields<T extends object>(view: T, mask: Masker): T {
  const fields = view as Record<string, unknown>;
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    if (typeof v === 'string' && !NO_CONTACTS.has(k)) fields[k] = mask(v);
  }
  return view;
}

/**
 * The API's view of a lead. Without leads:contacts the email and phone are masked, and so is
 * every spelling of them in any other text of the lead (a reason quoting the partner, a sub id,
 * an autologin URL carrying the email): pass the lead's masker when it is made anyway.
 */
export function toLead(r: LeadRow, contacts: boolean, mask: Masker | null = contacts ? null : contactMasker(r)) {
  const view = {
    id: r.id,
    created_at: r.created_at,
    first_name: r.first_name,
    last_name: r.last_name,
    email: contacts ? r.email : maskEmail(r.email),
    phone: contacts ? r.phone : maskPhone(r.phone),
    country: r.country,
    ip: r.ip,
    language: r.language,
    funnel: r.funnel,
    sub_id1: r.sub_id1,
    sub_id2: r.sub_id2,
    sub_id3: r.sub_id3,
    sub_id4: r.sub_id4,
    sub_id5: r.sub_id5,
    traffic_provider_id: r.traffic_provider_id,
    traffic_provider_name: r.traffic_provider_name ?? null,
    campaign_id: r.campaign_id,
    campaign_name: r.campaign_name ?? null,
    flow_id: r.flow_id,
    flow_name: r.flow_name ?? null,
    partner_id: r.partner_id,
    partner_name: r.partner_name ?? null,
    status: r.status,
    reason: r.reason,
    partner_lead_id: r.partner_lead_id,
    sale_status: r.sale_status,
    autologin_url: r.autologin_url,
    delivered_at: r.delivered_at,
    ftd_at: r.ftd_at,
    is_ftd: r.ftd_at !== null,
    status_updated_at: r.status_updated_at,
    payout: money(r.cost_cents),
    revenue: money(r.revenue_cents),
    flags: flagNames(r.flags),
    quality_score: r.quality_score,
  };
  return mask ? maskFields(view, mask) : view;
}

export type LeadView = ReturnType<typeof toLead>;

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
