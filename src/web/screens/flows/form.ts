// The flow editor's form state and its mapping to and from the API. Numeric inputs hold what the
// operator typed (number or ''), and nothing is checked here: the API's validation messages are
// the single source of truth, shown next to the field they name.
import type { Flag } from '../../ui/flags';
import type { paths } from '../../api/schema';
import { fieldWords, partMessage, partWords, shownErrors, type FieldErrors } from '../../ui/fields';
import { countryValuesOf, objectOf, type CountryValue } from '../../ui/CountryValues';

export type Flow = paths['/api/flows/{id}']['get']['responses'][200]['content']['application/json'];
type FlowPatch = NonNullable<paths['/api/flows/{id}']['patch']['requestBody']>['content']['application/json'];
type TargetInput = NonNullable<FlowPatch['targets']>[number];
type Num = number | string;

export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export interface TargetRow {
  key: string; // stable React key and error anchor: survives reordering
  partner_id: string | null;
  partner_name: string;
  priority: Num;
  weight: Num;
  daily_cap: Num; // '' = no cap of its own
  hourly_cap: Num;
  total_cap: Num;
  country_caps: CountryValue[];
  cap_counts: 'deliveries' | 'ftds';
  countries: string[];
  hasSchedule: boolean;
  timezone: string;
  days: string[]; // ISO weekday numbers as strings ('1' = Monday), for the checkbox group
  from: string;
  to: string;
}

export interface FlowForm {
  name: string;
  status: 'active' | 'paused';
  max_attempts: Num;
  targets: TargetRow[];
  holdFlags: Flag[]; // the review rule: flags that hold a lead
  holdScore: Num; // '' = no score holds a lead
}

let seq = 0;
const nextKey = () => `t${++seq}`;

export function newTarget(priority: number): TargetRow {
  return {
    key: nextKey(),
    partner_id: null,
    partner_name: '',
    priority,
    weight: 100,
    daily_cap: '',
    hourly_cap: '',
    total_cap: '',
    country_caps: [],
    cap_counts: 'deliveries',
    countries: [],
    hasSchedule: false,
    timezone: 'UTC',
    days: ['1', '2', '3', '4', '5'],
    from: '09:00',
    to: '18:00',
  };
}

export function formOf(flow: Flow | null): FlowForm {
  if (!flow) return { name: '', status: 'active', max_attempts: 3, targets: [], holdFlags: [], holdScore: '' };
  return {
    name: flow.name,
    status: flow.status,
    max_attempts: flow.max_attempts,
    holdFlags: flow.review.hold_flags,
    holdScore: flow.review.min_score ?? '',
    targets: flow.targets.map((t) => ({
      ...newTarget(t.priority),
      partner_id: t.partner_id,
      partner_name: t.partner_name,
      weight: t.weight,
      daily_cap: t.daily_cap ?? '',
      hourly_cap: t.hourly_cap ?? '',
      total_cap: t.total_cap ?? '',
      country_caps: countryValuesOf(t.country_caps),
      cap_counts: t.cap_counts,
      countries: t.countries,
      ...(t.schedule && {
        hasSchedule: true,
        timezone: t.schedule.timezone,
        days: t.schedule.days.map(String),
        from: t.schedule.from,
        to: t.schedule.to,
      }),
    })),
  };
}

// A cleared number input is sent as null, so the API names the field instead of the UI guessing.
const num = (v: Num) => (v === '' ? (null as unknown as number) : Number(v));

/** The whole flow as the API takes it; targets in the order shown. */
export function bodyOf(form: FlowForm) {
  return {
    name: form.name,
    status: form.status,
    max_attempts: num(form.max_attempts),
    review: { hold_flags: form.holdFlags, min_score: form.holdScore === '' ? null : Number(form.holdScore) },
    targets: form.targets.map((t): TargetInput => ({
      partner_id: t.partner_id ?? '',
      priority: num(t.priority),
      weight: num(t.weight),
      daily_cap: t.daily_cap === '' ? null : Number(t.daily_cap),
      hourly_cap: t.hourly_cap === '' ? null : Number(t.hourly_cap),
      total_cap: t.total_cap === '' ? null : Number(t.total_cap),
      country_caps: objectOf(t.country_caps),
      cap_counts: t.cap_counts,
      countries: t.countries,
      schedule: t.hasSchedule ? { timezone: t.timezone, days: t.days.map(Number), from: t.from, to: t.to } : null,
    })),
  };
}

const TARGET_PARTS: Record<string, string> = {
  partner_id: 'partner',
  priority: 'priority',
  weight: 'weight',
  daily_cap: 'daily cap',
  hourly_cap: 'hourly cap',
  total_cap: 'total cap',
  country_caps: 'caps per country',
  cap_counts: 'caps count',
  countries: 'countries',
  schedule: 'own schedule',
};
const SCHEDULE_PARTS: Record<string, string> = {
  timezone: 'time zone',
  days: 'days',
  from: 'open from',
  to: 'open until',
};
const FLOW_LABELS: Record<string, string> = {
  name: 'Name',
  status: 'Status',
  max_attempts: 'Max attempts',
  targets: 'Targets',
};

/**
 * Maps the API's `errors[]` (field like `targets[1].schedule.days`) onto the rows as they were
 * sent: keys, not indexes, so a message stays on its row if the operator reorders afterwards;
 * labelled as the screen says it ("Target 2, own schedule, open from").
 */
export function fieldErrors(errors: { field: string; message: string }[], sent: TargetRow[]): FieldErrors {
  return shownErrors(
    errors.map((e) => {
      const m = /^targets\[(\d+)\](?:\.(\w+))?/.exec(e.field);
      const row = m ? sent[Number(m[1])] : undefined;
      if (!m || !row) {
        const top = e.field.replace(/[.[].*$/, '');
        const part = partWords(e.field.slice(top.length));
        const label = FLOW_LABELS[top] ?? fieldWords(top);
        return {
          input: top,
          label: part ? `${label}, ${part}` : label,
          atInput: partMessage(part, e.message),
          message: e.message,
        };
      }
      // A nested field (schedule.from, countries[2]) is shown at its input group, naming the part.
      const input = `${row.key}.${m[2] ?? 'row'}`;
      const rest = e.field.slice(m[0].length).replace(/^\./, '');
      const restWords = m[2] === 'schedule' ? (SCHEDULE_PARTS[rest] ?? partWords(rest)) : partWords(rest);
      const label = [`Target ${Number(m[1]) + 1}`, m[2] ? (TARGET_PARTS[m[2]] ?? m[2]) : '', restWords]
        .filter(Boolean)
        .join(', ');
      return { input, label, atInput: partMessage(restWords, e.message), message: e.message };
    }),
  );
}
