// A search request (query string + caller) → a checked LeadFilter. Every bad parameter is
// named at once in one 400, like body validation does.
import type { DataScope } from '../../db/scope.js';
import type { LeadStatus } from '../../db/tables.js';
import { invalid, type FieldError } from '../../http/errors.js';
import type { Principal } from '../../types.js';
import { isoText, isTimeZone, lowerBound, parseBound, upperBound } from './dates.js';
import { FLAGS, maskOf, type Flag } from '../../db/lead-flags.js';

export const LEAD_STATUSES = [
  'new',
  'pending',
  'held',
  'delivered',
  'rejected',
  'duplicate',
  'failed',
] as const satisfies readonly LeadStatus[];
/** The statuses a traffic provider is shown: a held lead is `pending` to it (the review queue is the operator's). */
export const PROVIDER_LEAD_STATUSES = LEAD_STATUSES.filter((s) => s !== 'held') as Exclude<LeadStatus, 'held'>[];
export const DATE_TYPES = ['registration', 'delivered', 'ftd', 'status_updated'] as const;
export type DateType = (typeof DATE_TYPES)[number];

/** The leads column each date_type sorts and filters on; each has a (column, id) index. */
export const DATE_COLUMNS = {
  registration: 'created_at',
  delivered: 'delivered_at',
  ftd: 'ftd_at',
  status_updated: 'status_updated_at',
} as const satisfies Record<DateType, string>;

/** How many lead ids the id filter takes at most (200 ids keep the URL under 8 KB). */
export const MAX_IDS = 200;

export const SUB_IDS = ['sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'] as const;
export type SubId = (typeof SUB_IDS)[number];

/** What q may match, already normalised; each part is an exact or prefix match on an indexed form. */
export interface TextMatch {
  id: string;
  email: string | null; // only for callers holding leads:contacts
  phone: string | null; // E.164; only for callers holding leads:contacts
  /** Name prefixes as typed (trimmed); queries.ts folds case the way its engine's lower() does. */
  name: { whole: string; first: string | null; last: string | null } | null;
}

export interface LeadFilter {
  dateType: DateType;
  /** desc: newest first (the default); asc: oldest first. */
  order: 'desc' | 'asc';
  from: string | null; // inclusive, ISO UTC
  to: string | null; // exclusive, ISO UTC
  status: LeadStatus[];
  country: string[];
  partner_id?: string;
  traffic_provider_id?: string;
  campaign_id?: string;
  flow_id?: string;
  is_ftd?: boolean;
  autologin_opened?: boolean;
  reinjected?: boolean;
  sale_status?: string;
  /** Only these leads (lower-case UUIDs); empty: no id filter. */
  ids: string[];
  subIds: Partial<Record<SubId, string>>;
  /** Leads with any of these flags (a mask; 0: no such filter). */
  flags: number;
  flagged?: boolean;
  max_score?: number;
  q: TextMatch | null;
  /** Whose leads the caller reads (its role's scope): applied by the query, never by a handler. */
  scope: DataScope;
}

export interface SearchParams {
  date_type: DateType;
  order?: 'desc' | 'asc';
  date_from?: string;
  date_to?: string;
  timezone?: string;
  status?: string[];
  country?: string[];
  partner_id?: string;
  traffic_provider_id?: string;
  campaign_id?: string;
  flow_id?: string;
  is_ftd?: boolean;
  autologin_opened?: boolean;
  reinjected?: boolean;
  sale_status?: string;
  id?: string[];
  flag?: string[];
  flagged?: boolean;
  max_score?: number;
  q?: string;
  sub_id1?: string;
  sub_id2?: string;
  sub_id3?: string;
  sub_id4?: string;
  sub_id5?: string;
}

export const canSeeContacts = (p: Principal) => p.permissions.has('leads:contacts');

/** Repeated and comma-separated values alike: ["a,b", "c"] → ["a", "b", "c"], blanks dropped. */
export const splitMulti = (values: string[] | undefined) => [
  ...new Set(
    (values ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean),
  ),
];

const PHONE_TEXT = /^\+?[\d\s().-]+$/;

/** An E.164 number from what a person types ("+49 151 2345-678", "0049…"), or null. */
export function normalisePhone(text: string): string | null {
  const t = text.trim();
  if (!PHONE_TEXT.test(t)) return null;
  let digits = t.replace(/\D/g, '');
  if (!t.startsWith('+') && digits.startsWith('00')) digits = digits.slice(2);
  return /^[1-9]\d{5,14}$/.test(digits) ? `+${digits}` : null;
}

/**
 * Free text → the exact forms it can match. Contacts are matched only for callers who may see
 * them: otherwise a search could confirm an address that every answer masks.
 */
export function textMatch(q: string, contacts: boolean): TextMatch {
  const text = q.trim();
  // A lead id is a UUID, and nothing else looks like one: look it up alone, by primary key.
  if (UUID.test(text)) return { id: text.toLowerCase(), email: null, phone: null, name: null };
  const hasAt = text.includes('@');
  let name: TextMatch['name'] = null;
  if (!hasAt && /\p{L}/u.test(text)) {
    const words = text.split(/\s+/);
    name = {
      whole: words.join(' '),
      first: words.length > 1 ? words[0] : null,
      last: words.length > 1 ? words.slice(1).join(' ') : null,
    };
  }
  return {
    id: text,
    // The normal form intake stores (NFKC, lower case), so a full-width spelling finds the lead.
    email: contacts && hasAt ? text.normalize('NFKC').toLowerCase() : null,
    phone: contacts ? normalisePhone(text) : null,
    name,
  };
}

/**
 * What contact q spells out whole, if any: an email (it has an @) or a phone number. Without
 * leads:contacts such a search could only answer 0, so it is refused with a message that says why.
 */
export function contactShape(q: string): 'email address' | 'phone number' | null {
  const text = q.trim();
  if (UUID.test(text)) return null;
  if (text.includes('@')) return 'email address';
  return normalisePhone(text) ? 'phone number' : null;
}

/** The first few bad values, quoted, for an error message of bounded length. */
const quoted = (values: string[]) =>
  values
    .slice(0, 5)
    .map((v) => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v))
    .join(', ') + (values.length > 5 ? ', …' : '');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks and normalises the search parameters; 400 naming every bad one. */
export function leadFilter(params: SearchParams, principal: Principal): LeadFilter {
  const errors: FieldError[] = [];
  const tz = params.timezone ?? principal.operator.timezone;
  const zoneOk = isTimeZone(tz);
  if (!zoneOk) {
    if (params.timezone !== undefined)
      errors.push({ field: 'timezone', message: `"${params.timezone}" is not an IANA time zone (e.g. Europe/Berlin)` });
  }
  // An operator whose stored zone no longer exists still gets answers, in UTC.
  const zone = zoneOk ? tz : 'UTC';

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
  // A date date_to includes its last instant (to − 1 ms); an instant one is exclusive. Equal
  // instants make an empty range, which is allowed; a range that ends before it starts is not.
  const reversed = from !== null && to !== null && (toB!.kind === 'date' ? from >= to : from > to);
  if (reversed) errors.push({ field: 'date_from', message: 'is after date_to' });

  const status = splitMulti(params.status);
  const badStatus = status.filter((s) => !(LEAD_STATUSES as readonly string[]).includes(s));
  if (badStatus.length)
    errors.push({
      field: 'status',
      message: `unknown status ${quoted(badStatus)}; one of: ${LEAD_STATUSES.join(', ')}`,
    });

  const country = splitMulti(params.country).map((c) => c.toUpperCase());
  const badCountry = country.filter((c) => !/^[A-Z]{2}$/.test(c));
  if (badCountry.length)
    errors.push({ field: 'country', message: `must be ISO 3166-1 alpha-2 codes (e.g. DE); not ${quoted(badCountry)}` });
  else if (country.length > 250) errors.push({ field: 'country', message: 'lists too many values' });

  const ids = splitMulti(params.id).map((v) => v.toLowerCase());
  const badIds = ids.filter((v) => !UUID.test(v));
  if (badIds.length) errors.push({ field: 'id', message: `must be lead ids (UUIDs); not ${quoted(badIds)}` });
  else if (ids.length > MAX_IDS)
    errors.push({ field: 'id', message: `lists ${ids.length} lead ids; at most ${MAX_IDS}` });

  const flag = splitMulti(params.flag);
  const badFlag = flag.filter((f) => !(FLAGS as readonly string[]).includes(f));
  if (badFlag.length)
    errors.push({ field: 'flag', message: `unknown flag ${quoted(badFlag)}; one of: ${FLAGS.join(', ')}` });

  const shape = params.q === undefined || canSeeContacts(principal) ? null : contactShape(params.q);
  if (shape) {
    const holder =
      principal.via === 'api_key'
        ? 'this API key does not have (its scopes and its operator’s role must both include it)'
        : 'your role does not have';
    errors.push({
      field: 'q',
      message: `is a whole ${shape}: searching by email or phone needs the permission leads:contacts, which ${holder}; search by name or lead id instead`,
    });
  }

  if (errors.length) invalid(errors);

  const subIds: LeadFilter['subIds'] = {};
  for (const k of SUB_IDS) if (params[k] !== undefined) subIds[k] = params[k];
  const q = params.q?.trim();
  return {
    dateType: params.date_type,
    order: params.order ?? 'desc',
    from: from === null ? null : isoText(from),
    to: to === null ? null : isoText(to),
    status: status as LeadStatus[],
    country,
    partner_id: params.partner_id,
    traffic_provider_id: params.traffic_provider_id,
    campaign_id: params.campaign_id,
    flow_id: params.flow_id,
    is_ftd: params.is_ftd,
    autologin_opened: params.autologin_opened,
    reinjected: params.reinjected,
    sale_status: params.sale_status,
    ids,
    subIds,
    flags: maskOf(flag as Flag[]),
    flagged: params.flagged,
    max_score: params.max_score,
    q: q ? textMatch(q, canSeeContacts(principal)) : null,
    scope: principal.scope,
  };
}
