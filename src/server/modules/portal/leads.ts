// The portal's leads (issue 27): search, one lead, CSV export. What a provider is shown of a lead
// is decided here, once (toPortalLead): its own leads only (the queries are scoped), the reason in
// the words intake answers with (never a partner's), the sale status in the provider's words (or
// null), the FTD and what comes with it only after the hold, the payout only when shown, contacts
// masked and only when shown.
import { Readable } from 'node:stream';
import type { DB } from '../../db/database.js';
import { invalid, notFound, type FieldError } from '../../http/errors.js';
import { csvCell } from '../../http/csv.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { maskEmail, maskPhone } from '../../privacy/mask.js';
import { canonicalTimeZone } from '../../time.js';
import { CURRENCY } from '../analytics/service.js';
import { audit, providerOf, type Actor } from '../audit/service.js';
import { providerReason } from '../intake/service.js';
import { isoText, lowerBound, parseBound, upperBound } from '../leads/dates.js';
import { PROVIDER_LEAD_STATUSES, SUB_IDS, splitMulti } from '../leads/search.js';
import type { LeadStatus } from '../../db/tables.js';
import {
  ftdVisibleAt,
  providerSaleStatus,
  readPortalSettings,
  type PortalSettings,
} from '../traffic-providers/portal-settings.js';
import {
  cpaCampaignIds,
  findPortalLead,
  findPortalLeads,
  type PortalLeadFilter,
  type PortalLeadRow,
} from './leads-queries.js';

export interface PortalLeadParams {
  date_from?: string;
  date_to?: string;
  status?: string[];
  country?: string[];
  campaign_id?: string;
  q?: string;
  sub_id1?: string;
  sub_id2?: string;
  sub_id3?: string;
  sub_id4?: string;
  sub_id5?: string;
}

/** The user's zone, or UTC when the stored one no longer exists. */
export const zoneOf = (tz: string) => canonicalTimeZone(tz) ?? 'UTC';

/** Checks the filters; one 400 naming every bad one. Days are days in the user's zone. */
export function portalLeadFilter(params: PortalLeadParams, tz: string): PortalLeadFilter {
  const errors: FieldError[] = [];
  const zone = zoneOf(tz);
  const bound = (field: 'date_from' | 'date_to') => {
    const text = params[field];
    if (text === undefined) return null;
    const b = parseBound(text);
    if (!b) errors.push({ field, message: 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with Z or an offset' });
    return b;
  };
  const fromB = bound('date_from');
  const toB = bound('date_to');
  const from = fromB ? lowerBound(fromB, zone) : null;
  const to = toB ? upperBound(toB, zone) : null;
  if (from !== null && to !== null && from > to) errors.push({ field: 'date_from', message: 'is after date_to' });
  const status = splitMulti(params.status);
  const bad = status.filter((s) => !(PROVIDER_LEAD_STATUSES as readonly string[]).includes(s));
  if (bad.length)
    errors.push({
      field: 'status',
      message: `unknown status "${bad[0]}"; one of: ${PROVIDER_LEAD_STATUSES.join(', ')}`,
    });
  const country = splitMulti(params.country).map((c) => c.toUpperCase());
  const badCountry = country.find((c) => !/^[A-Z]{2}$/.test(c));
  if (badCountry)
    errors.push({
      field: 'country',
      message: `must be ISO 3166-1 alpha-2 codes (e.g. DE); not "${badCountry.slice(0, 40)}"`,
    });
  if (errors.length) invalid(errors);
  const subIds: PortalLeadFilter['subIds'] = {};
  for (const k of SUB_IDS) if (params[k] !== undefined) subIds[k] = params[k];
  return {
    from: from === null ? null : isoText(from),
    to: to === null ? null : isoText(to),
    // A held lead is pending to its provider: "pending" finds both.
    status: status.flatMap((s) => (s === 'pending' ? ['pending', 'held'] : [s])) as LeadStatus[],
    country,
    campaign_id: params.campaign_id,
    subIds,
    q: params.q?.trim() || null,
  };
}

/** What a provider is shown, decided once per request: its settings, its CPA campaigns, now. */
export interface View {
  settings: PortalSettings;
  cpaCampaigns: Set<string>;
  nowMs: number;
}

export async function viewOf(db: DB, trafficProviderId: string, nowMs = Date.now()): Promise<View> {
  const settings = (await readPortalSettings(db, trafficProviderId)) ?? notFound('Traffic provider');
  return { settings: settings!, cpaCampaigns: new Set(await cpaCampaignIds(db, trafficProviderId)), nowMs };
}

/** The instant up to which FTDs are out of their hold (ISO): FTDs at or before it are shown. */
export const ftdCutoff = (v: View) => new Date(v.nowMs - v.settings.ftd_hold_hours * 3_600_000).toISOString();

export function toPortalLead(r: PortalLeadRow, v: View) {
  const { settings } = v;
  const ftdShown = r.ftd_at !== null && Date.parse(ftdVisibleAt(settings, r.ftd_at)) <= v.nowMs;
  const ftdHeld = r.ftd_at !== null && !ftdShown;
  let sale = providerSaleStatus(settings, r.sale_status);
  if (sale === 'converted' && !ftdShown) sale = 'in_progress';
  // A CPA campaign's payout comes with the FTD: none while it is in its hold.
  const payout = ftdHeld && r.campaign_id !== null && v.cpaCampaigns.has(r.campaign_id) ? 0 : Number(r.cost_cents);
  return {
    id: r.id,
    created_at: r.created_at,
    status: r.status === 'held' ? ('pending' as const) : r.status,
    reason: providerReason(r.status, r.reason),
    country: r.country,
    campaign_id: r.campaign_id,
    campaign_name: r.campaign_name ?? null,
    sub_id1: r.sub_id1,
    sub_id2: r.sub_id2,
    sub_id3: r.sub_id3,
    sub_id4: r.sub_id4,
    sub_id5: r.sub_id5,
    sale_status: sale,
    ftd_at: ftdShown ? r.ftd_at : null,
    payout_cents: settings.show_payout ? payout : null,
    currency: settings.show_payout ? CURRENCY : null,
    email: settings.show_contacts ? maskEmail(r.email) : null,
    phone: settings.show_contacts ? maskPhone(r.phone) : null,
  };
}

export type PortalLeadView = ReturnType<typeof toPortalLead>;

const sortKey = (r: { created_at: string; id: string }) => ({ created_at: r.created_at, id: r.id });

export async function searchPortalLeads(
  db: DB,
  actor: Actor,
  params: PortalLeadParams & { limit: number; cursor?: string },
) {
  const p = providerOf(actor);
  const filter = portalLeadFilter(params, p.user.timezone);
  const after = decodeCursor(params.cursor, ['created_at', 'id'] as const);
  const view = await viewOf(db, p.trafficProviderId);
  const rows = await findPortalLeads(db, p.scope, filter, after, params.limit + 1);
  const page = pageOf(rows, params.limit, sortKey);
  return { ...page, data: page.data.map((r) => toPortalLead(r, view)) };
}

export async function portalLead(db: DB, actor: Actor, id: string) {
  const p = providerOf(actor);
  const row = (await findPortalLead(db, p.scope, id)) ?? notFound('Lead');
  return toPortalLead(row!, await viewOf(db, p.trafficProviderId));
}

export const PORTAL_CSV_COLUMNS = [
  'id',
  'created_at',
  'status',
  'reason',
  'country',
  'campaign_id',
  'campaign_name',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
  'sale_status',
  'ftd_at',
  'payout_cents',
  'currency',
  'email',
  'phone',
] as const satisfies readonly (keyof PortalLeadView)[];

const EXPORT_CHUNK = 1000;

/**
 * The provider's leads matching the filters as CSV, streamed in keyset chunks (newest first). The
 * first chunk is read before the answer starts, so a failing query still gets a proper error.
 */
export async function exportPortalLeads(db: DB, actor: Actor, params: PortalLeadParams) {
  const p = providerOf(actor);
  const filter = portalLeadFilter(params, p.user.timezone);
  const view = await viewOf(db, p.trafficProviderId);
  await audit(db, actor, {
    action: 'portal.leads_exported',
    target_type: 'traffic_provider',
    target_id: p.trafficProviderId,
    details: { filters: params },
  });
  const line = (r: PortalLeadRow) => {
    const lead = toPortalLead(r, view);
    return PORTAL_CSV_COLUMNS.map((c) => csvCell(lead[c])).join(',') + '\r\n';
  };
  const first = await findPortalLeads(db, p.scope, filter, null, EXPORT_CHUNK);
  async function* lines() {
    yield PORTAL_CSV_COLUMNS.join(',') + '\r\n';
    let rows = first;
    for (;;) {
      if (rows.length) yield rows.map(line).join('');
      if (rows.length < EXPORT_CHUNK) return;
      rows = await findPortalLeads(db, p.scope, filter, sortKey(rows[rows.length - 1]), EXPORT_CHUNK);
    }
  }
  return {
    stream: Readable.from(lines(), { objectMode: false, highWaterMark: 64 * 1024 }),
    fileName: `leads-${new Date(view.nowMs).toISOString().slice(0, 19).replace(/:/g, '-')}Z.csv`,
  };
}
