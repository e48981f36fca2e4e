import { useQuery } from '@tanstack/react-query';
import type { Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { dayIn, instantIn } from '../../ui/clock';
import { fieldErrors, type FieldErrors } from '../../ui/fields';
import { allOptions, type Option } from '../../ui/options';
import { useWhoami } from '../../whoami';

export type Entry = paths['/api/blocklists/{id}']['get']['responses'][200]['content']['application/json'];
export type Kind = Entry['kind'];

/** The kinds, as the screen names them, with what a value of each looks like. */
export const KINDS: { value: Kind; label: string; hint: string }[] = [
  { value: 'email', label: 'Email', hint: 'One address, e.g. spam@example.com (any spelling of it).' },
  { value: 'email_domain', label: 'Email domain', hint: 'A domain and all its subdomains, e.g. example.com.' },
  { value: 'phone', label: 'Phone', hint: 'International format with the country code, e.g. +49 151 23456789.' },
  {
    value: 'ip',
    label: 'IP address or block',
    hint: 'An address or a CIDR block, e.g. 203.0.113.7 or 203.0.113.0/24.',
  },
  { value: 'sub_id', label: 'Sub ID', hint: 'A value in any of sub_id1–sub_id5, exactly as sent.' },
];
export const kindLabel = (k: Kind) => KINDS.find((x) => x.value === k)?.label ?? k;
export const KIND_OPTIONS = KINDS.map(({ value, label }) => ({ value, label }));

/** The list's query key prefix: every change to entries refreshes it. */
export const LIST_KEY = 'blocklists';

/** The value filter's word for global entries (the API's `traffic_provider_id=global`). */
export const GLOBAL = 'global';

/** "Global", or the provider's name (its id once the provider is gone). */
export const scopeText = (e: Entry) =>
  e.traffic_provider_id === null ? 'Global' : (e.traffic_provider_name ?? e.traffic_provider_id);

export interface ProviderChoice {
  /** Whether the screen offers a provider at all (a filter, a choice in the forms). */
  shown: boolean;
  /** Whether an entry may be global: not for a role limited to some providers. */
  global: boolean;
  options: Option[];
}

/**
 * The providers an entry can be for. A role limited to some providers picks one of its own (whoami
 * names them; global entries are not its to see or make). Otherwise the list needs
 * traffic_providers:view; without it nothing is asked for and every entry is global.
 */
export function useProviderChoice(): ProviderChoice {
  const whoami = useWhoami().data;
  const scoped = whoami?.scope.traffic_providers ?? null;
  const listsAll = !scoped && !!whoami?.permissions.includes('traffic_providers:view');
  const all = useQuery({
    queryKey: ['blocklist-provider-options'],
    enabled: listsAll,
    queryFn: () => allOptions('/api/traffic-providers'),
  });
  if (scoped)
    return { shown: true, global: false, options: scoped.map((p) => ({ value: p.id, label: p.name ?? p.id })) };
  return { shown: listsAll, global: true, options: all.data ?? [] };
}

/** An expiry picked as a day: the entry blocks until the end of that day in the operator's zone. */
export const expiryOf = (day: string, zone: string) => (day ? instantIn(zone, `${day}T23:59:59`) : null);

/** The day an expiry falls on in the operator's zone, for the date input ('' when it never expires). */
export const dayOf = (at: string | null, zone: string) => (at ? dayIn(zone, new Date(at)) : '');

export const FORM_LABELS: Record<string, string> = {
  kind: 'Kind',
  value: 'Value',
  traffic_provider_id: 'Traffic provider',
  expires_at: 'Expires on',
  note: 'Note',
};

/**
 * A refusal as the form shows it: each field's message at its input, and the alert's text (a
 * conflict's own words; for field errors, those whose input this form does not show).
 */
export function refused(p: Problem, shownInputs: string[]): { errors: FieldErrors; problem: string | null } {
  const errors = fieldErrors(p.errors, FORM_LABELS);
  const elsewhere = errors.list.filter((e) => !shownInputs.includes(e.input));
  if (!errors.list.length) return { errors, problem: p.detail };
  return {
    errors,
    problem: elsewhere.length
      ? elsewhere.map((e) => `${e.label}: ${e.message}`).join(' · ')
      : 'Not saved: please correct the fields marked above.',
  };
}
