import { Button, Group, MultiSelect, Select, SimpleGrid, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, must } from '../../api/client';
import { DATE_TYPES, setText, STATUSES, type DateType, type FilterQuery } from './filters';
import { CountriesInput } from '../../ui/inputs';

// The id filters offer the records' names; the first page (500) is enough to pick from, and a
// list the operator may not read simply offers nothing instead of breaking the form.
function useOptions(path: '/api/partners' | '/api/traffic-providers' | '/api/campaigns' | '/api/flows') {
  const list = useQuery({
    queryKey: ['options', path],
    queryFn: async () => must(await api.GET(path, { params: { query: { limit: 500 } } })),
  });
  return (list.data?.data ?? []).map((r) => ({ value: r.id, label: r.name }));
}

const FTD = [
  { value: 'true', label: 'FTD: yes' },
  { value: 'false', label: 'FTD: no' },
];

/** The filter form: edits a draft, and the table follows only when the operator applies it. */
export function LeadFilters({ value, onApply }: { value: FilterQuery; onApply: (f: FilterQuery) => void }) {
  const [draft, setDraft] = useState<FilterQuery>(value);
  // The URL is the truth: back/forward or a reset replaces what the form shows.
  useEffect(() => setDraft(value), [value]);
  const partners = useOptions('/api/partners');
  const providers = useOptions('/api/traffic-providers');
  const campaigns = useOptions('/api/campaigns');
  const flows = useOptions('/api/flows');

  const text = (key: Parameters<typeof setText>[1], label: string, extra: { placeholder?: string; type?: string } = {}) => (
    <TextInput
      label={label}
      value={(draft[key] as string | undefined) ?? ''}
      onChange={(e) => setDraft(setText(draft, key, e.currentTarget.value))}
      {...extra}
    />
  );
  const pick = (key: 'partner_id' | 'traffic_provider_id' | 'campaign_id' | 'flow_id', label: string, data: { value: string; label: string }[]) => (
    <Select label={label} data={data} value={draft[key] ?? null} onChange={(v) => setDraft(setText(draft, key, v))} searchable clearable />
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    onApply(draft);
  }

  return (
    <form onSubmit={submit} aria-label="Lead filters">
      <SimpleGrid cols={{ base: 2, md: 4, lg: 6 }} spacing="sm" verticalSpacing="xs">
        <Select
          label="Date type"
          data={DATE_TYPES}
          value={draft.date_type ?? 'registration'}
          onChange={(v) => setDraft({ ...draft, date_type: (v ?? 'registration') as DateType })}
          allowDeselect={false}
        />
        {text('date_from', 'From', { type: 'date' })}
        {text('date_to', 'To', { type: 'date' })}
        <MultiSelect label="Status" data={[...STATUSES]} value={draft.status ?? []} onChange={(v) => setDraft({ ...draft, status: v.length ? v : undefined })} clearable />
        <CountriesInput placeholder="DE, AT" value={draft.country} onChange={(country) => setDraft({ ...draft, country })} />
        <Select
          label="FTD"
          data={FTD}
          value={draft.is_ftd === undefined ? null : String(draft.is_ftd)}
          onChange={(v) => setDraft({ ...draft, is_ftd: v === null ? undefined : v === 'true' })}
          clearable
        />
        {pick('partner_id', 'Partner', partners)}
        {pick('traffic_provider_id', 'Traffic provider', providers)}
        {pick('campaign_id', 'Campaign', campaigns)}
        {pick('flow_id', 'Flow', flows)}
        {text('sale_status', 'Sale status')}
        {text('q', 'Search', { placeholder: 'Id, name, email, phone' })}
        {([1, 2, 3, 4, 5] as const).map((n) => (
          <span key={n}>{text(`sub_id${n}`, `Sub ID ${n}`)}</span>
        ))}
      </SimpleGrid>
      <Group mt="sm">
        <Button type="submit">Apply filters</Button>
        <Button variant="default" onClick={() => onApply({})}>
          Reset
        </Button>
      </Group>
    </form>
  );
}
