// The API's view of a lead (the Leads table, the detail, the CSV export): its stored row as the
// API shows it, with the contacts masked for a reader without leads:contacts. Kept apart from the
// lead's queries so the export's worker thread loads only what a row's view needs.
import { flagNames } from '../../db/lead-flags.js';
import { contactMasker, maskEmail, maskPhone, type Masker } from '../../privacy/mask.js';
import type { LeadRow } from './search-queries.js';

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
export function maskFields<T extends object>(view: T, mask: Masker): T {
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
