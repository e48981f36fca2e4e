import { Button, Group, Select, SimpleGrid, TextInput } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import {
  DATE_TYPES,
  DIMENSIONS,
  PRESETS,
  presetRange,
  dayIn,
  type DateType,
  type Dimension,
  type ReportForm,
} from './report';
import { CountriesInput, TimezoneSelect } from '../../ui/inputs';

/**
 * The report's choices: edited as a draft, applied together (one request, one URL change).
 * Nothing is checked here: the API's own messages (a range too long, the same grouping twice)
 * come back readably, so the screen cannot disagree with the server.
 */
interface Props {
  value: ReportForm;
  onApply: (f: ReportForm) => void;
  /** The days the report on screen covers: shown in the date boxes the URL leaves empty (the default range). */
  covered: { date_from: string; date_to: string } | null;
  /** The report's time zone (the operator's unless one is picked): its days, and the "today" the presets start from. */
  timeZone: string;
  /** Partner performance: dates and countries only (attempts count by the time of the call). */
  partners?: boolean;
  /** The country filter (the CRG report has none). */
  countries?: boolean;
}

export function ReportPickers({ value, onApply, covered, timeZone, partners = false, countries = true }: Props) {
  const [draft, setDraft] = useState<ReportForm>(value);
  // The URL is the truth: back/forward or a reset replaces what the form shows; dates it leaves
  // out show the range the report actually covers, never an empty box.
  useEffect(
    () =>
      setDraft({
        ...value,
        date_from: value.date_from ?? covered?.date_from,
        date_to: value.date_to ?? covered?.date_to,
      }),
    [value, covered?.date_from, covered?.date_to],
  );
  const today = dayIn(timeZone);
  const active = PRESETS.find((p) => {
    const r = presetRange(p.value, today);
    return covered && r.date_from === covered.date_from && r.date_to === covered.date_to;
  })?.value;

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
      <Group gap={6} mb="xs" role="group" aria-label="Date range presets">
        {PRESETS.map((p) => (
          <Button
            key={p.value}
            size="compact-sm"
            variant={active === p.value ? 'filled' : 'default'}
            aria-pressed={active === p.value}
            onClick={() => onApply({ ...value, ...presetRange(p.value, today) })}
          >
            {p.label}
          </Button>
        ))}
      </Group>
      <SimpleGrid cols={{ base: 2, md: 3, lg: 6 }} spacing="sm" verticalSpacing="xs">
        {date('date_from', 'From')}
        {date('date_to', 'To')}
        <TimezoneSelect value={draft.timezone ?? timeZone} onChange={(timezone) => setDraft({ ...draft, timezone })} />
        {!partners && (
          <>
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
          </>
        )}
        {countries && (
          <CountriesInput
            placeholder="All, or DE, AT"
            value={draft.country}
            onChange={(country) => setDraft({ ...draft, country })}
          />
        )}
      </SimpleGrid>
      <Group mt="sm">
        <Button type="submit">Show report</Button>
        <Button variant="default" onClick={() => onApply(partners ? {} : { group_by: 'day' })}>
          Reset
        </Button>
      </Group>
    </form>
  );
}
