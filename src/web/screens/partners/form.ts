// The partner editor's form state and its mapping to and from the API. As in the flow editor, the
// API's validation messages are the source of truth; the only checks made here are those the API
// cannot make: the body template must parse as JSON, and header rows must have distinct names
// (an object cannot carry two headers of one name, so one would silently be lost).
import type { paths } from '../../api/schema';
import { fieldWords, partMessage, partWords, shownErrors, type FieldErrors } from '../../ui/fields';
import { WEEKDAYS } from '../flows/form';
import { countryValuesOf, objectOf, type CountryValue } from '../../ui/CountryValues';
import type { Flag } from '../../ui/flags';

export type Partner = paths['/api/partners/{id}']['get']['responses'][200]['content']['application/json'];
type TestBody = NonNullable<
  NonNullable<paths['/api/partners/{id}/test']['post']['requestBody']>['content']['application/json']
>;
export type IntegrationBody = NonNullable<TestBody['integration']>;
export type TestResult = paths['/api/partners/{id}/test']['post']['responses'][200]['content']['application/json'];
type Num = number | string;
export type Method = 'POST' | 'GET' | 'PUT';
export type BodyFormat = 'json' | 'form';
export type PartnerTemplate =
  paths['/api/partners/templates']['get']['responses'][200]['content']['application/json']['data'][number];

export interface HeaderRow {
  key: string; // stable React key and error anchor
  name: string;
  value: string; // as the API showed it (masked) until the operator types a new one
}

export interface PartnerForm {
  name: string;
  status: 'active' | 'paused';
  countries: string[];
  hasHours: boolean;
  timezone: string;
  days: string[]; // ISO weekday numbers as strings, for the checkbox group
  from: string;
  to: string;
  daily_cap: Num; // '' = no cap
  hourly_cap: Num;
  total_cap: Num;
  dealModel: '' | 'cpl' | 'cpa'; // '' = no deal
  dealAmount: Num;
  dealByCountry: CountryValue[];
  hasCrg: boolean;
  crgRate: Num;
  crgPeriod: 'week' | 'month';
  pause_after_failures: Num; // '' = never
  method: Method;
  body_format: BodyFormat;
  url: string;
  headers: HeaderRow[];
  body: string; // the body template as JSON text
  success_path: string;
  lead_id_path: string;
  autologin_path: string;
  timeout_ms: Num;
  track_autologin: boolean;
  autologin_single_use: boolean;
  refuseFlags: Flag[]; // the quality rule: flags refused
  minScore: Num; // '' = any score
}

let seq = 0;
export const newHeader = (name = '', value = ''): HeaderRow => ({ key: `h${++seq}`, name, value });

export function formOf(p: Partner | null): PartnerForm {
  const i = p?.integration;
  const wh = p?.working_hours ?? null;
  return {
    name: p?.name ?? '',
    status: p?.status ?? 'active',
    countries: p?.countries ?? [],
    hasHours: wh !== null,
    timezone: wh?.timezone ?? 'UTC',
    days: wh?.days.map(String) ?? ['1', '2', '3', '4', '5'],
    from: wh?.from ?? '09:00',
    to: wh?.to ?? '18:00',
    daily_cap: p?.daily_cap ?? '',
    hourly_cap: p?.hourly_cap ?? '',
    total_cap: p?.total_cap ?? '',
    dealModel: p?.deal?.model ?? '',
    dealAmount: p?.deal?.amount ?? '',
    dealByCountry: countryValuesOf(p?.deal?.by_country),
    hasCrg: Boolean(p?.deal?.crg),
    crgRate: p?.deal?.crg?.rate ?? 10,
    crgPeriod: p?.deal?.crg?.period ?? 'month',
    pause_after_failures: p?.pause_after_failures ?? '',
    method: i?.method ?? 'POST',
    body_format: i?.body_format ?? 'json',
    url: i?.url ?? '',
    headers: Object.entries((i?.headers ?? {}) as Record<string, string>).map(([n, v]) => newHeader(n, v)),
    body: JSON.stringify(i?.body_template ?? {}, null, 2),
    success_path: i?.success_path ?? '',
    lead_id_path: i?.lead_id_path ?? '',
    autologin_path: i?.autologin_path ?? '',
    timeout_ms: i?.timeout_ms ?? 5000,
    track_autologin: p?.track_autologin ?? false,
    autologin_single_use: p?.autologin_single_use ?? false,
    refuseFlags: p?.quality.refuse_flags ?? [],
    minScore: p?.quality.min_score ?? '',
  };
}

/** The form with a template's integration in place of its own; the URL, names and the rest are kept. */
export function withTemplate(form: PartnerForm, t: PartnerTemplate): PartnerForm {
  const i = t.integration;
  return {
    ...form,
    method: i.method,
    body_format: i.body_format,
    headers: Object.entries(i.headers).map(([n, v]) => newHeader(n, v)),
    body: JSON.stringify(i.body_template, null, 2),
    success_path: i.success_path,
    lead_id_path: i.lead_id_path,
    autologin_path: i.autologin_path,
    timeout_ms: i.timeout_ms,
  };
}

// A cleared required number is sent as null, so the API names the field instead of the UI guessing.
const num = (v: Num) => (v === '' ? (null as unknown as number) : Number(v));
const cap = (v: Num) => (v === '' ? null : Number(v));

/** Field → message for what the API cannot check; empty when the form can be sent. */
export function localErrors(form: PartnerForm): Map<string, string> {
  const out = new Map<string, string>();
  try {
    const parsed: unknown = JSON.parse(form.body);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      out.set('integration.body_template', 'must be a JSON object ({ … })');
  } catch (e) {
    out.set('integration.body_template', `is not valid JSON: ${(e as Error).message}`);
  }
  const seen = new Set<string>();
  for (const h of form.headers) {
    const lower = h.name.trim().toLowerCase();
    if (!lower) out.set(`header:${h.key}`, 'needs a name (or remove the row)');
    else if (seen.has(lower)) out.set(`header:${h.key}`, 'is a second header of this name');
    seen.add(lower);
  }
  return out;
}

/**
 * Sent in place of the template while localErrors() finds something: not an object, so the API
 * refuses the save for sure (a header row lost to a duplicate name is never stored) while it
 * still checks, and names, everything else in the same answer (withLocal shows both).
 */
const NOT_SENT = 'not sent: the editor found errors' as unknown as Record<string, never>;

/** The integration as the API takes it. */
export function integrationOf(form: PartnerForm): IntegrationBody {
  return {
    method: form.method,
    body_format: form.body_format,
    url: form.url,
    headers: Object.fromEntries(form.headers.map((h) => [h.name.trim(), h.value])),
    body_template: localErrors(form).size ? NOT_SENT : (JSON.parse(form.body) as Record<string, never>),
    success_path: form.success_path,
    lead_id_path: form.lead_id_path,
    autologin_path: form.autologin_path,
    timeout_ms: num(form.timeout_ms),
  };
}

/** The deal as the API takes it: null without a model; a guarantee only with a CPL price. */
function dealOf(form: PartnerForm) {
  if (form.dealModel === '') return null;
  return {
    model: form.dealModel,
    amount: num(form.dealAmount),
    by_country: objectOf(form.dealByCountry),
    crg: form.dealModel === 'cpl' && form.hasCrg ? { rate: num(form.crgRate), period: form.crgPeriod } : null,
  };
}

export function bodyOf(form: PartnerForm) {
  return {
    name: form.name,
    status: form.status,
    countries: form.countries,
    working_hours: form.hasHours
      ? { timezone: form.timezone, days: form.days.map(Number), from: form.from, to: form.to }
      : null,
    daily_cap: cap(form.daily_cap),
    hourly_cap: cap(form.hourly_cap),
    total_cap: cap(form.total_cap),
    deal: dealOf(form),
    pause_after_failures: cap(form.pause_after_failures),
    integration: integrationOf(form),
    track_autologin: form.track_autologin,
    autologin_single_use: form.autologin_single_use,
    quality: { refuse_flags: form.refuseFlags, min_score: cap(form.minScore) },
  };
}

/** What each input is called on screen, by the API field it shows. */
const LABELS: Record<string, string> = {
  name: 'Name',
  status: 'Status',
  countries: 'Countries',
  daily_cap: 'Daily cap',
  hourly_cap: 'Hourly cap',
  total_cap: 'Total cap',
  deal: 'Deal',
  'deal.model': 'Deal',
  'deal.amount': 'Price',
  'deal.by_country': 'Prices per country',
  'deal.crg': 'Conversion-rate guarantee',
  'deal.crg.rate': 'Promised FTD rate (%)',
  'deal.crg.period': 'Guarantee period',
  pause_after_failures: 'Pause after failed calls',
  track_autologin: 'Track autologin links',
  autologin_single_use: 'Single use',
  quality: 'Lead quality',
  'quality.refuse_flags': 'Refuse leads flagged',
  'quality.min_score': 'Minimum quality score',
  working_hours: 'Working hours',
  'working_hours.timezone': 'Time zone',
  'working_hours.days': 'Days',
  'working_hours.from': 'From',
  'working_hours.to': 'To',
  integration: 'Integration',
  'integration.method': 'Method',
  'integration.body_format': 'Body format',
  'integration.url': 'URL',
  'integration.timeout_ms': 'Timeout (ms)',
  'integration.headers': 'Headers',
  'integration.body_template': 'Body template',
  'integration.success_path': 'Success path',
  'integration.lead_id_path': 'Lead id path',
  'integration.autologin_path': 'Autologin path',
};
const INPUTS = Object.keys(LABELS).sort((a, b) => b.length - a.length);

/** The inputs a form key's edit clears the messages of. */
export function inputsOf(key: string): string[] {
  if (key === 'headers') return ['integration.headers', 'header:*'];
  if (key === 'body') return ['integration.body_template'];
  if (key === 'dealModel') return ['deal', 'deal.model', 'deal.crg'];
  if (key === 'dealAmount') return ['deal.amount'];
  if (key === 'dealByCountry') return ['deal.by_country'];
  if (key === 'hasCrg' || key === 'crgRate' || key === 'crgPeriod')
    return ['deal.crg', 'deal.crg.rate', 'deal.crg.period'];
  if (key === 'refuseFlags') return ['quality.refuse_flags', 'quality'];
  if (key === 'minScore') return ['quality.min_score', 'quality'];
  if (key === 'hasHours')
    return ['working_hours', 'working_hours.timezone', 'working_hours.days', 'working_hours.from', 'working_hours.to'];
  if (key === 'timezone' || key === 'days' || key === 'from' || key === 'to')
    return [`working_hours.${key}`, 'working_hours'];
  if (key in LABELS) return [key];
  return [`integration.${key}`];
}

/** Field errors made here, shown like the API's. */
export function fromLocal(local: Map<string, string>): FieldErrors {
  return shownErrors(
    [...local].map(([input, message]) => ({
      input,
      label: input.startsWith('header:') ? 'Headers' : (LABELS[input] ?? input),
      atInput: message,
      message,
    })),
  );
}

/** The editor's own findings and the API's answer to the rest, as one list (the API's word on the template is about NOT_SENT). */
export function withLocal(local: Map<string, string>, api: FieldErrors): FieldErrors {
  return shownErrors([
    ...fromLocal(local).list,
    ...api.list.filter((e) => !(local.has(e.input) || (local.size && e.input === 'integration.body_template'))),
  ]);
}

/**
 * Maps the API's `errors[]` onto the inputs: `integration.headers.X` onto the row named X as sent,
 * anything inside the body template (`integration.body_template.a.b`) onto the template textarea
 * naming the part, and an indexed field (`countries[2]`, `working_hours.days[0]`) onto its input;
 * each labelled as on screen ("Header X-Api-Key", "Body template, a, b", "Countries, item 3").
 */
export function fieldErrors(errors: { field: string; message: string }[], sent: HeaderRow[]): FieldErrors {
  return shownErrors(
    errors.map((e) => {
      const header = /^integration\.headers\.(.+)$/.exec(e.field);
      const row = header && sent.find((h) => h.name.trim() === header[1]);
      if (row)
        return { input: `header:${row.key}`, label: `Header ${header![1]}`, atInput: e.message, message: e.message };
      const input = INPUTS.find((i) => e.field === i || e.field.startsWith(`${i}[`) || e.field.startsWith(`${i}.`));
      if (!input) return { input: e.field, label: fieldWords(e.field), atInput: e.message, message: e.message };
      const rest = e.field.slice(input.length);
      // Inside the template the keys are the partner's: shown as written, not turned into words.
      const part = input === 'integration.body_template' ? rest.replace(/^\./, '') : partWords(rest);
      return {
        input,
        label: part ? `${LABELS[input]}, ${part}` : LABELS[input],
        atInput: partMessage(part, e.message),
        message: e.message,
      };
    }),
  );
}

/** "Mon–Fri 09:00–18:00 (Europe/Berlin)", or "Always" without working hours. */
export function hoursText(wh: Partner['working_hours']): string {
  if (!wh) return 'Always';
  const d = [...wh.days].sort((a, b) => a - b);
  const run = d.length > 2 && d[d.length - 1] - d[0] === d.length - 1;
  const days = run
    ? `${WEEKDAYS[d[0] - 1]}–${WEEKDAYS[d[d.length - 1] - 1]}`
    : d.map((n) => WEEKDAYS[n - 1]).join(', ');
  return `${days} ${wh.from}–${wh.to} (${wh.timezone})`;
}
