import type { PostbackPartner } from '../../auth/machine-tokens.js';
import { isPostgres, type DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem, invalid, type FieldError } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { MAX_PRICE as MAX_PAYOUT, saleAtDelivery, toCents } from '../../distribution/prices.js';
import { parseBound } from '../leads/dates.js';
import { applyConversion, CONVERSION_LEAD_COLUMNS, dealOf, payoutCents, type Applied } from '../conversions/apply.js';

/** What a postback reports, checked and normalised (absent = not reported). */
export interface Postback {
  ref: { lead_id: string } | { partner_lead_id: string };
  sale_status?: string;
  ftd?: boolean;
  /** ISO UTC. */
  ftd_at?: string;
  revenue_cents?: number;
}

/** Raw fields as they arrive: text from a query or form, native types from JSON. */
export type RawPostback = Partial<
  Record<'lead_id' | 'partner_lead_id' | 'sale_status' | 'ftd' | 'ftd_at' | 'revenue', unknown>
>;

/** Partners' clocks drift; an FTD time a little ahead of ours is still believable. */
const FUTURE_SLACK_MS = 5 * 60_000;
/** Earlier is a placeholder (0001-01-01, a "null" date), not a deposit: refused, not hidden in year 1. */
const EARLIEST_FTD_MS = Date.UTC(2000, 0, 1);
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);
const DECIMAL = /^(\d{1,9})(?:\.(\d{1,2}))?$/;

/** '' means "not sent": templates leave macros the partner has no value for empty. */
const given = (v: unknown): v is string | number | boolean => v !== undefined && v !== null && v !== '';

function parseRevenue(v: string | number | boolean): number | string {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) return 'must be a number ≥ 0';
    return toCents(v) ?? 'must have at most 2 decimals (cents)';
  }
  const s = String(v).trim();
  if (/^-/.test(s)) return 'must be ≥ 0';
  const m = DECIMAL.exec(s);
  if (!m) return 'must be a decimal amount in USD with at most 2 decimals, e.g. 250 or 250.50';
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** Checks every field at once; throws one 400 naming each bad field. */
export function parsePostback(raw: RawPostback): Postback {
  const errors: FieldError[] = [];
  const out: Partial<Postback> = {};

  const leadId = given(raw.lead_id) ? String(raw.lead_id).trim() : '';
  const partnerLeadId = given(raw.partner_lead_id) ? String(raw.partner_lead_id).trim() : '';
  if (leadId && partnerLeadId)
    errors.push({ field: 'partner_lead_id', message: 'must not be sent together with lead_id: send one of them' });
  else if (leadId) out.ref = { lead_id: leadId };
  else if (partnerLeadId) out.ref = { partner_lead_id: partnerLeadId };
  else errors.push({ field: 'lead_id', message: 'is required (or partner_lead_id): which lead the postback is about' });

  // (Its length, like every field's, is checked by the route schema.)
  const saleStatus = given(raw.sale_status) ? String(raw.sale_status).trim() : '';
  if (saleStatus) out.sale_status = saleStatus;

  if (given(raw.ftd)) {
    const f = String(raw.ftd).trim().toLowerCase();
    if (TRUE.has(f)) out.ftd = true;
    else if (FALSE.has(f)) out.ftd = false;
    else errors.push({ field: 'ftd', message: 'must be one of: true, false, 1, 0, yes, no' });
  }

  if (given(raw.ftd_at)) {
    const b = parseBound(String(raw.ftd_at).trim());
    if (!b || b.kind !== 'instant')
      errors.push({
        field: 'ftd_at',
        message: 'must be an ISO 8601 date-time with Z or an offset, e.g. 2026-11-22T10:15:00Z',
      });
    else if (b.ms > Date.now() + FUTURE_SLACK_MS)
      errors.push({ field: 'ftd_at', message: 'is more than 5 minutes in the future' });
    else if (b.ms < EARLIEST_FTD_MS)
      errors.push({ field: 'ftd_at', message: 'is before 2000: not a believable FTD time' });
    else out.ftd_at = new Date(b.ms).toISOString();
  }

  if (given(raw.revenue)) {
    const cents = parseRevenue(raw.revenue);
    if (typeof cents === 'string') errors.push({ field: 'revenue', message: cents });
    else if (cents > MAX_PAYOUT * 100) errors.push({ field: 'revenue', message: `must be at most ${MAX_PAYOUT}` });
    else out.revenue_cents = cents;
  }

  if (errors.length) invalid(errors);
  return out as Postback;
}

export interface PostbackResult {
  lead_id: string;
  changed: boolean;
  sale_status: string | null;
  ftd_at: string | null;
  revenue: number;
  notes: string[];
}

const notFound = (): never => {
  throw new HttpProblem(404, 'not_found', 'No lead delivered to this partner matches that lead_id or partner_lead_id.');
};

const LEAD_COLUMNS = CONVERSION_LEAD_COLUMNS;

/**
 * The lead a postback is about: delivered, and to this partner (else 404, whether or not it
 * exists). Or, by lead_id, a lead that `failed` because the server stopped while this partner was
 * being called (its last attempt): the partner's postback proves it registered the lead, and a
 * conversion must not be lost for it (`recovered`).
 */
async function lockLead(tx: DB, partnerId: string, ref: Postback['ref']) {
  let q = tx
    .selectFrom('leads')
    .select(LEAD_COLUMNS)
    .where('partner_id', '=', partnerId)
    .where('status', '=', 'delivered');
  q = 'lead_id' in ref ? q.where('id', '=', ref.lead_id) : q.where('partner_lead_id', '=', ref.partner_lead_id);
  // PostgreSQL: concurrent postbacks for one lead take turns, so each sees what the last one
  // wrote (SQLite runs one write transaction at a time anyway).
  if (isPostgres(tx)) q = q.forUpdate();
  const rows = await q.limit(2).execute();
  if (rows.length > 1) {
    throw new HttpProblem(
      409,
      'conflict',
      'Several leads delivered to this partner carry that partner_lead_id; send lead_id instead.',
    );
  }
  if (rows.length) return { ...rows[0], recovered: false };
  if ('lead_id' in ref) {
    let interrupted = tx
      .selectFrom('leads')
      .select(LEAD_COLUMNS)
      .where('id', '=', ref.lead_id)
      .where('status', '=', 'failed')
      .where((eb) =>
        eb(
          eb
            .selectFrom('lead_attempts')
            .select('lead_attempts.partner_id')
            .whereRef('lead_attempts.lead_id', '=', 'leads.id')
            .orderBy('lead_attempts.attempt_no', 'desc')
            .limit(1),
          '=',
          partnerId,
        ),
      );
    if (isPostgres(tx)) interrupted = interrupted.forUpdate();
    const lead = await interrupted.executeTakeFirst();
    if (lead) return { ...lead, recovered: true };
  }
  return notFound();
}

/**
 * Applies a postback in one transaction. Repeats change nothing: the sale status is only
 * written when it differs, and the first FTD reported wins (later ones only add a note).
 * Every postback that changes the lead is audited (via system: the actor is the partner).
 */
export async function applyPostback(
  db: DB,
  actor: Actor,
  partner: PostbackPartner,
  p: Postback,
): Promise<PostbackResult> {
  return db.transaction().execute(async (tx) => {
    const lead = await lockLead(tx, partner.id, p.ref);
    const base: Applied = { changed: false, patch: {}, changes: {}, notes: [] };
    if (lead.recovered) {
      Object.assign(base.patch, { status: 'delivered', partner_id: partner.id, delivered_at: nowIso(), reason: null });
      base.changes.status = { from: 'failed', to: 'delivered' };
      const cost = await payoutCents(tx, lead.campaign_id, 'cpl', lead.country);
      if (cost !== null) base.patch.cost_cents = cost;
      Object.assign(base.patch, saleAtDelivery(await dealOf(tx, partner.id), lead.country));
      base.notes.push(
        'The delivery of this lead to you was interrupted on our side; your postback shows you registered it, so it is now recorded as delivered to you.',
      );
    }
    const { changed, patch, changes, notes } = await applyConversion(tx, lead, p, 'postback', base);
    if (changed) {
      await audit(tx, actor, {
        action: 'lead.postback',
        target_type: 'lead',
        target_id: lead.id,
        via: 'system',
        details: { partner_id: partner.id, partner_name: partner.name, changes },
      });
    }
    return {
      lead_id: lead.id,
      changed,
      sale_status: patch.sale_status ?? lead.sale_status,
      ftd_at: patch.ftd_at ?? lead.ftd_at,
      revenue: Number(patch.revenue_cents ?? lead.revenue_cents) / 100,
      notes,
    };
  });
}
