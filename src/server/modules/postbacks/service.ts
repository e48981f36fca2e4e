import type { FastifyRequest } from 'fastify';
import type { PostbackPartner } from '../../auth/machine-tokens.js';
import { isPostgres, type DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem, invalid, type FieldError } from '../../http/errors.js';
import { audit } from '../audit/service.js';
import { MAX_PAYOUT } from '../campaigns/schemas.js';
import { toCents } from '../campaigns/service.js';
import { parseBound } from '../leads/dates.js';

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
export type RawPostback = Partial<Record<'lead_id' | 'partner_lead_id' | 'sale_status' | 'ftd' | 'ftd_at' | 'revenue', unknown>>;

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
  if (leadId && partnerLeadId) errors.push({ field: 'partner_lead_id', message: 'must not be sent together with lead_id: send one of them' });
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
    if (!b || b.kind !== 'instant') errors.push({ field: 'ftd_at', message: 'must be an ISO 8601 date-time with Z or an offset, e.g. 2026-11-22T10:15:00Z' });
    else if (b.ms > Date.now() + FUTURE_SLACK_MS) errors.push({ field: 'ftd_at', message: 'is more than 5 minutes in the future' });
    else if (b.ms < EARLIEST_FTD_MS) errors.push({ field: 'ftd_at', message: 'is before 2000: not a believable FTD time' });
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

const LEAD_COLUMNS = ['id', 'campaign_id', 'sale_status', 'ftd_at', 'revenue_cents', 'cost_cents'] as const;

/**
 * The lead a postback is about: delivered, and to this partner (else 404, whether or not it
 * exists). Or, by lead_id, a lead that `failed` because the server stopped while this partner was
 * being called (its last attempt): the partner's postback proves it registered the lead, and a
 * conversion must not be lost for it (`recovered`).
 */
async function lockLead(tx: DB, partnerId: string, ref: Postback['ref']) {
  let q = tx.selectFrom('leads').select(LEAD_COLUMNS).where('partner_id', '=', partnerId).where('status', '=', 'delivered');
  q = 'lead_id' in ref ? q.where('id', '=', ref.lead_id) : q.where('partner_lead_id', '=', ref.partner_lead_id);
  // PostgreSQL: concurrent postbacks for one lead take turns, so each sees what the last one
  // wrote (SQLite runs one write transaction at a time anyway).
  if (isPostgres(tx)) q = q.forUpdate();
  const rows = await q.limit(2).execute();
  if (rows.length > 1) {
    throw new HttpProblem(409, 'conflict', 'Several leads delivered to this partner carry that partner_lead_id; send lead_id instead.');
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
          eb.selectFrom('lead_attempts').select('lead_attempts.partner_id').whereRef('lead_attempts.lead_id', '=', 'leads.id').orderBy('lead_attempts.attempt_no', 'desc').limit(1),
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

/** What the campaign pays its traffic provider per lead delivered (cpl), when it does. */
async function cplPayoutCents(tx: DB, campaignId: string | null): Promise<number | null> {
  if (!campaignId) return null;
  const c = await tx.selectFrom('campaigns').select('payout').where('id', '=', campaignId).executeTakeFirst();
  const payout = c ? (JSON.parse(c.payout) as { model: 'cpl' | 'cpa'; amount_cents: number }) : null;
  return payout?.model === 'cpl' ? payout.amount_cents : null;
}

/** What the campaign pays its traffic provider per FTD, when it pays per FTD (cpa). */
async function cpaPayoutCents(tx: DB, campaignId: string | null): Promise<number | null> {
  if (!campaignId) return null;
  const c = await tx.selectFrom('campaigns').select('payout').where('id', '=', campaignId).executeTakeFirst();
  if (!c) return null;
  const payout = JSON.parse(c.payout) as { model: 'cpl' | 'cpa'; amount_cents: number };
  return payout.model === 'cpa' ? payout.amount_cents : null;
}

/**
 * Applies a postback in one transaction. Repeats change nothing: the sale status is only
 * written when it differs, and the first FTD reported wins (later ones only add a note).
 * Every postback that changes the lead is audited (via system: the actor is the partner).
 */
export async function applyPostback(db: DB, req: FastifyRequest, partner: PostbackPartner, p: Postback): Promise<PostbackResult> {
  return db.transaction().execute(async (tx) => {
    const lead = await lockLead(tx, partner.id, p.ref);
    const notes: string[] = [];
    const patch: {
      status?: 'delivered';
      partner_id?: string;
      delivered_at?: string;
      reason?: null;
      sale_status?: string;
      ftd_at?: string;
      revenue_cents?: number;
      cost_cents?: number;
      status_updated_at?: string;
    } = {};
    const changes: Record<string, unknown> = {};

    if (lead.recovered) {
      Object.assign(patch, { status: 'delivered', partner_id: partner.id, delivered_at: nowIso(), reason: null });
      changes.status = { from: 'failed', to: 'delivered' };
      const cost = await cplPayoutCents(tx, lead.campaign_id);
      if (cost !== null) patch.cost_cents = cost;
      notes.push('The delivery of this lead to you was interrupted on our side; your postback shows you registered it, so it is now recorded as delivered to you.');
    }

    if (p.sale_status !== undefined && p.sale_status !== lead.sale_status) {
      patch.sale_status = p.sale_status;
      changes.sale_status = { from: lead.sale_status, to: p.sale_status };
    }
    if (p.ftd === true && lead.ftd_at === null) {
      patch.ftd_at = p.ftd_at ?? nowIso();
      changes.ftd_at = patch.ftd_at;
      if (p.revenue_cents !== undefined) {
        patch.revenue_cents = p.revenue_cents;
        changes.revenue = { from: Number(lead.revenue_cents) / 100, to: p.revenue_cents / 100 };
      }
      const cost = await cpaPayoutCents(tx, lead.campaign_id);
      if (cost !== null) {
        patch.cost_cents = cost;
        changes.cost = { from: Number(lead.cost_cents) / 100, to: cost / 100 };
      }
    } else if (p.ftd === true) {
      notes.push(`An FTD is already recorded for this lead (at ${lead.ftd_at}); the first one reported wins, so ftd, ftd_at and revenue change nothing.`);
    } else {
      if (p.ftd === false && lead.ftd_at !== null) notes.push('An FTD already recorded is not withdrawn by ftd=false.');
      if (p.ftd_at !== undefined || p.revenue_cents !== undefined) notes.push('ftd_at and revenue are recorded only with ftd=true; ignored.');
    }

    const changed = Object.keys(patch).length > 0;
    if (changed) {
      patch.status_updated_at = nowIso();
      await tx.updateTable('leads').set(patch).where('id', '=', lead.id).execute();
      await audit(tx, req, {
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
