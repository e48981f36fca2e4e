import { Button, Group, Select, SimpleGrid, TextInput } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { DATE_TYPES, DIMENSIONS, type DateType, type Dimension, type ReportForm } from './report';
import { CountriesInput } from '../../ui/inputs';

/**
 * The report's choices: edited as a draft, applied together (one request, one URL change).
 * Nothing is checked here: the API's own messages (a range too long, the same grouping twice)
 * come back readably, so the screen cannot disagree with the server.
 */
export function ReportPickers({ value, onApply }: { value: ReportForm; onApply: (f: ReportForm) => void }) {
  const [draft, setDraft] = useState<ReportForm>(value);
  // The URL is the truth: back/forward or a reset replaces what the form shows.
  useEffect(() => setDraft(value), [value]);

  function submit(e: FormEvent) {
    e.preventDefault();
    onApply(draft);
  }
  const date = (key: 'date_from' | 'date_to', label: string) => (
    <TextInput
      type="date"
      label={label}
      value={draft[key] ?? ''}
      onChange={(e) => setDraft({ ...draft, [key]: e.currentTarget.value || undefined })}
    />
  );

  return (
    <form onSubmit={submit} aria-label="Report options">
      <SimpleGrid cols={{ base: 2, md: 3, lg: 6 }} spacing="sm" verticalSpacing="xs">
        {date('date_from', 'From')}
        {date('date_to', 'To')}
        <Select
          label="Date type"
          data={DATE_TYPES}
          value={draft.date_type ?? 'registration'}
          onChange={(v) => setDraft({ ...draft, date_type: (v ?? 'registration') as DateType })}
          allowDeselect={false}
        />
        <Select
          label="Group by"
          data={DIMENSIONS}
          value={draft.group_by ?? 'day'}
          onChange={(v) => setDraft({ ...draft, group_by: (v ?? 'day') as Dimension })}
          allowDeselect={false}
        />
        <Select
          label="Then by"
          placeholder="Nothing"
          data={DIMENSIONS}
          value={draft.then_by ?? null}
          onChange={(v) => setDraft({ ...draft, then_by: (v ?? undefined) as Dimension | undefined })}
          clearable
        />
        <CountriesInput placeholder="All, or DE, AT" value={draft.country} onChange={(country) => setDraft({ ...draft, country })} />
      </SimpleGrid>
      <Group mt="sm">
        <Button type="submit">Show report</Button>
        <Button variant="default" onClick={() => onApply({ group_by: 'day' })}>
          Reset
        </Button>
      </Group>
    </form>
  );
}
