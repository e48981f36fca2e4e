import {
  Autocomplete,
  Button,
  Collapse,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  TextInput,
  useMantineTheme,
} from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { countActive, countMore, DATE_TYPES, setText, STATUSES, type DateType, type FilterQuery } from './filters';
import { CountriesInput } from '../../ui/inputs';
import { FLAG_NAMES } from '../quality/flags';
import { useFlagInfo } from '../quality/useFlagInfo';

/** Each id filter, the list it picks from and the permission that list needs. */
const PICKERS = {
  partner_id: { path: '/api/partners', permission: 'partners:view', label: 'Partner' },
  traffic_provider_id: {
    path: '/api/traffic-providers',
    permission: 'traffic_providers:view',
    label: 'Traffic provider',
  },
  campaign_id: { path: '/api/campaigns', permission: 'campaigns:view', label: 'Campaign' },
  flow_id: { path: '/api/flows', permission: 'flows:view', label: 'Flow' },
} as const;
type PickerKey = keyof typeof PICKERS;

// The id filters offer the records' names; the first page (500) is enough to pick from. A list
// the operator may not read is never asked for (no 403), and its filter is not shown.
function useOptions(key: PickerKey, permissions: string[] | undefined) {
  const { path, permission } = PICKERS[key];
  const allowed = !!permissions?.includes(permission);
  const list = useQuery({
    queryKey: ['options', path],
    enabled: allowed,
    queryFn: async () => must(await api.GET(path, { params: { query: { limit: 500 } } })),
  });
  return allowed ? (list.data?.data ?? []).map((r) => ({ value: r.id, label: r.name })) : null;
}

/** The sale statuses partners have reported, for the picker (fetched when the picker is shown). */
function useSaleStatuses(enabled: boolean) {
  const list = useQuery({
    queryKey: ['options', 'sale-statuses'],
    enabled,
    queryFn: async () => must(await api.GET('/api/leads/sale-statuses')),
  });
  return list.data?.data ?? [];
}

const FTD = [
  { value: 'true', label: 'FTD: yes' },
  { value: 'false', label: 'FTD: no' },
];
const OPENED = [
  { value: 'true', label: 'Opened' },
  { value: 'false', label: 'Not opened' },
];
const REINJECTED = [
  { value: 'true', label: 'Re-injected' },
  { value: 'false', label: 'Fresh traffic only' },
];

const FLAGGED = [
  { value: 'true', label: 'Flagged only' },
  { value: 'false', label: 'Unflagged only' },
];

const MORE_KEY = 'leadgate.leads.more-filters';

/**
 * The filter form: edits a draft, and the table follows only when the operator applies it. The
 * filters used most come first, in one row on a wide screen; the rest fold under "More filters",
 * whose button counts the ones set there, so a hidden filter is never forgotten.
 */
export function LeadFilters({ value, onApply }: { value: FilterQuery; onApply: (f: FilterQuery) => void }) {
  const [draft, setDraft] = useState<FilterQuery>(value);
  // The URL is the truth: back/forward or a reset replaces what the form shows.
  useEffect(() => setDraft(value), [value]);
  const phone = !useMediaQuery(`(min-width: ${useMantineTheme().breakpoints.sm})`, true, {
    getInitialValueInEffect: false,
  });
  // Open or folded is remembered in this browser, for the phone and the wide layout apart.
  const moreKey = phone ? `${MORE_KEY}.phone` : MORE_KEY;
  const [more, setMore] = useState(() => localStorage.getItem(moreKey) === 'open');
  useEffect(() => setMore(localStorage.getItem(moreKey) === 'open'), [moreKey]);
  const permissions = useWhoami().data?.permissions;
  const options = {
    partner_id: useOptions('partner_id', permissions),
    traffic_provider_id: useOptions('traffic_provider_id', permissions),
    campaign_id: useOptions('campaign_id', permissions),
    flow_id: useOptions('flow_id', permissions),
  };
  const saleStatuses = useSaleStatuses(more);
  const contacts = !!permissions?.includes('leads:contacts');
  const flagInfo = useFlagInfo();
  const flagOptions = FLAG_NAMES.map((f) => ({ value: f, label: flagInfo(f).label }));

  const text = (
    key: Parameters<typeof setText>[1],
    label: string,
    extra: { placeholder?: string; type?: string } = {},
  ) => (
    <TextInput
      label={label}
      value={(draft[key] as string | undefined) ?? ''}
      onChange={(e) => setDraft(setText(draft, key, e.currentTarget.value))}
      {...extra}
    />
  );
  // A filter whose list the role cannot read is left out (null); one set by a shared link still applies.
  const pick = (key: PickerKey) => {
    const data = options[key];
    return data === null ? null : (
      <Select
        label={PICKERS[key].label}
        data={data}
        value={draft[key] ?? null}
        onChange={(v) => setDraft(setText(draft, key, v))}
        searchable
        clearable
      />
    );
  };

  function submit(e: FormEvent) {
    e.preventDefault();
    onApply(draft);
  }

  function toggleMore() {
    localStorage.setItem(moreKey, more ? 'closed' : 'open');
    setMore(!more);
  }

  const search = (
    <div style={{ gridColumn: 'span 2' }}>
      {text('q', 'Search', {
        // Says exactly what the API matches: whole contacts only, and only for those who see them.
        placeholder: contacts ? 'Lead id, name, or whole email / phone' : 'Lead id or name',
      })}
    </div>
  );
  const common = (
    <>
      {text('date_from', 'From', { type: 'date' })}
      {text('date_to', 'To', { type: 'date' })}
      <MultiSelect
        label="Status"
        data={[...STATUSES]}
        value={draft.status ?? []}
        onChange={(v) => setDraft({ ...draft, status: v.length ? v : undefined })}
        clearable
      />
      <CountriesInput
        placeholder="DE, AT"
        value={draft.country}
        onChange={(country) => setDraft({ ...draft, country })}
      />
      {pick('partner_id')}
      {pick('traffic_provider_id')}
    </>
  );
  const rest = (
    <>
      <Select
        label="Date type"
        data={DATE_TYPES}
        value={draft.date_type ?? 'registration'}
        onChange={(v) => setDraft({ ...draft, date_type: (v ?? 'registration') as DateType })}
        allowDeselect={false}
      />
      {pick('campaign_id')}
      {pick('flow_id')}
      <Select
        label="FTD"
        data={FTD}
        value={draft.is_ftd === undefined ? null : String(draft.is_ftd)}
        onChange={(v) => setDraft({ ...draft, is_ftd: v === null ? undefined : v === 'true' })}
        clearable
      />
      <Select
        label="Autologin link"
        description="Tracked links only"
        data={OPENED}
        value={draft.autologin_opened === undefined ? null : String(draft.autologin_opened)}
        onChange={(v) => setDraft({ ...draft, autologin_opened: v === null ? undefined : v === 'true' })}
        clearable
      />
      <Select
        label="Re-injection"
        description="Sent again by a re-injection job"
        data={REINJECTED}
        value={draft.reinjected === undefined ? null : String(draft.reinjected)}
        onChange={(v) => setDraft({ ...draft, reinjected: v === null ? undefined : v === 'true' })}
        clearable
      />
      <Autocomplete
        label="Sale status"
        placeholder="As the partner reports it"
        data={saleStatuses}
        value={draft.sale_status ?? ''}
        onChange={(v) => setDraft(setText(draft, 'sale_status', v))}
        limit={50}
      />
      {/* Two columns wide: the flags' labels are long. */}
      <div style={{ gridColumn: 'span 2' }}>
        <MultiSelect
          label="Fraud flags"
          description="Any of these"
          data={flagOptions}
          value={draft.flag ?? []}
          onChange={(v) => setDraft({ ...draft, flag: v.length ? v : undefined })}
          clearable
        />
      </div>
      <Select
        label="Flagged"
        description="Any fraud flag raised"
        data={FLAGGED}
        value={draft.flagged === undefined ? null : String(draft.flagged)}
        onChange={(v) => setDraft({ ...draft, flagged: v === null ? undefined : v === 'true' })}
        clearable
      />
      <NumberInput
        label="Max quality score"
        description="0–100; scored leads only"
        value={draft.max_score ?? ''}
        onChange={(v) => setDraft({ ...draft, max_score: v === '' ? undefined : Number(v) })}
        allowDecimal={false}
        allowNegative={false}
        min={0}
        max={100}
        clampBehavior="none"
      />
      {([1, 2, 3, 4, 5] as const).map((n) => (
        <span key={n}>{text(`sub_id${n}`, `Sub ID ${n}`)}</span>
      ))}
    </>
  );
  // On a phone only Search stays out; every other filter folds, and the button counts those set.
  const hidden = phone ? countActive(value) - (value.q ? 1 : 0) : countMore(value);
  const cols = { base: 2, sm: 4, lg: 8 };
  return (
    <form onSubmit={submit} aria-label="Lead filters">
      <SimpleGrid cols={cols} spacing="sm" verticalSpacing="xs">
        {search}
        {!phone && common}
      </SimpleGrid>
      <Collapse in={more}>
        <SimpleGrid cols={cols} spacing="sm" verticalSpacing="xs" mt="xs" data-testid="more-filters">
          {phone && common}
          {rest}
        </SimpleGrid>
      </Collapse>
      <Group mt="sm" gap="sm">
        <Button type="submit">Apply filters</Button>
        <Button variant="default" onClick={() => onApply(value.order ? { order: value.order } : {})}>
          Reset
        </Button>
        <Button variant="subtle" onClick={toggleMore} aria-expanded={more} data-testid="more-filters-toggle">
          {phone ? (more ? 'Hide filters' : 'Filters') : more ? 'Fewer filters' : 'More filters'}
          {hidden > 0 ? ` (${hidden})` : ''}
        </Button>
      </Group>
    </form>
  );
}
