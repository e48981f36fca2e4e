import {
  ActionIcon,
  Checkbox,
  Group,
  NumberInput,
  Select,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { Fragment } from 'react';
import { CountryValues } from '../../ui/CountryValues';
import type { FieldErrors } from '../../ui/fields';
import { usePhone } from '../../ui/TableBox';
import { WEEKDAYS, type TargetRow } from './form';

interface Props {
  rows: TargetRow[];
  partners: { value: string; label: string }[];
  errors: FieldErrors;
  onChange: (rows: TargetRow[]) => void;
}

// On a phone each target is a card: its cells one under another, each input with its label.
const STACKED = {
  table: { display: 'block' },
  thead: { display: 'none' },
  tbody: { display: 'block' },
  tr: { display: 'block', borderBottom: '1px solid var(--mantine-color-gray-3)', paddingBlock: 4 },
  td: { display: 'block', border: 0 },
};

/** The ordered targets: one row each, with a second row for a target's own schedule. */
export function TargetsTable({ rows, partners, errors, onChange }: Props) {
  const phone = usePhone();
  const label = (text: string) => (phone ? text : undefined);
  const update = (key: string, patch: Partial<TargetRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rows];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    onChange(next);
  };

  if (rows.length === 0) {
    return <Text data-testid="targets-empty">No targets yet: leads in this flow go nowhere. Add one below.</Text>;
  }
  return (
    <Table.ScrollContainer minWidth={phone ? 0 : 800}>
      <Table data-testid="targets-table" verticalSpacing="xs" styles={phone ? STACKED : undefined}>
        <Table.Thead>
          <Table.Tr>
            {['#', 'Partner', 'Priority', 'Weight', 'Countries', 'Schedule', ''].map((h) => (
              <Table.Th key={h}>{h}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r, i) => {
            const n = i + 1;
            const err = (f: string) => errors.at(`${r.key}.${f}`);
            // A partner the list leaves out (archived) still shows by name on its existing row.
            const options =
              r.partner_id && !partners.some((p) => p.value === r.partner_id)
                ? [...partners, { value: r.partner_id, label: r.partner_name }]
                : partners;
            return (
              <Fragment key={r.key}>
                <Table.Tr data-testid="target-row" style={{ verticalAlign: 'top' }}>
                  <Table.Td pt="md" fw={phone ? 700 : undefined}>
                    {phone ? `Target ${n}` : n}
                  </Table.Td>
                  <Table.Td miw={phone ? undefined : 180}>
                    <Select
                      label={label('Partner')}
                      aria-label={`Partner of target ${n}`}
                      placeholder="Choose a partner"
                      data={options}
                      value={r.partner_id}
                      searchable
                      onChange={(v, o) => update(r.key, { partner_id: v, partner_name: o?.label ?? '' })}
                      error={err('partner_id') ?? err('row')}
                    />
                  </Table.Td>
                  <Table.Td w={phone ? undefined : 100}>
                    <NumberInput
                      label={label('Priority')}
                      aria-label={`Priority of target ${n}`}
                      value={r.priority}
                      onChange={(v) => update(r.key, { priority: v })}
                      allowDecimal={false}
                      error={err('priority')}
                    />
                  </Table.Td>
                  <Table.Td w={phone ? undefined : 110}>
                    <NumberInput
                      label={label('Weight')}
                      aria-label={`Weight of target ${n}`}
                      value={r.weight}
                      onChange={(v) => update(r.key, { weight: v })}
                      allowDecimal={false}
                      error={err('weight')}
                    />
                  </Table.Td>
                  <Table.Td miw={phone ? undefined : 150}>
                    <TagsInput
                      label={label('Countries')}
                      aria-label={`Countries of target ${n}`}
                      placeholder={r.countries.length ? '' : "Partner's own"}
                      value={r.countries}
                      onChange={(v) => update(r.key, { countries: [...new Set(v.map((c) => c.trim().toUpperCase()))] })}
                      splitChars={[',', ' ']}
                      error={err('countries')}
                    />
                  </Table.Td>
                  <Table.Td pt="md">
                    <Switch
                      aria-label={`Own schedule for target ${n}`}
                      label={`${phone ? 'Schedule: ' : ''}${r.hasSchedule ? 'Own' : "Partner's"}`}
                      checked={r.hasSchedule}
                      onChange={(e) => update(r.key, { hasSchedule: e.currentTarget.checked })}
                    />
                  </Table.Td>
                  <Table.Td pt="xs">
                    <Group gap={4} wrap="nowrap">
                      <ActionIcon
                        variant="default"
                        aria-label={`Move target ${n} up`}
                        disabled={i === 0}
                        onClick={() => move(i, -1)}
                      >
                        ↑
                      </ActionIcon>
                      <ActionIcon
                        variant="default"
                        aria-label={`Move target ${n} down`}
                        disabled={i === rows.length - 1}
                        onClick={() => move(i, 1)}
                      >
                        ↓
                      </ActionIcon>
                      <ActionIcon
                        color="red"
                        variant="light"
                        aria-label={`Remove target ${n}`}
                        onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
                      >
                        ✕
                      </ActionIcon>
                    </Group>
                  </Table.Td>
                </Table.Tr>
                {r.hasSchedule && (
                  <ScheduleRow row={r} n={n} error={err('schedule')} onChange={(patch) => update(r.key, patch)} />
                )}
                <CapsRow row={r} n={n} err={err} onChange={(patch) => update(r.key, patch)} />
              </Fragment>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function CapsRow({
  row,
  n,
  err,
  onChange,
}: {
  row: TargetRow;
  n: number;
  err: (f: string) => string | undefined;
  onChange: (patch: Partial<TargetRow>) => void;
}) {
  return (
    <Table.Tr data-testid="target-caps">
      <Table.Td />
      <Table.Td colSpan={6}>
        <Group align="flex-start">
          <NumberInput
            label="Daily cap"
            aria-label={`Daily cap of target ${n}`}
            placeholder="None"
            value={row.daily_cap}
            onChange={(v) => onChange({ daily_cap: v })}
            allowDecimal={false}
            error={err('daily_cap')}
            w={130}
          />
          <NumberInput
            label="Hourly cap"
            aria-label={`Hourly cap of target ${n}`}
            placeholder="None"
            value={row.hourly_cap}
            onChange={(v) => onChange({ hourly_cap: v })}
            allowDecimal={false}
            error={err('hourly_cap')}
            w={130}
          />
          <NumberInput
            label="Total cap"
            aria-label={`Total cap of target ${n}`}
            placeholder="None"
            value={row.total_cap}
            onChange={(v) => onChange({ total_cap: v })}
            allowDecimal={false}
            error={err('total_cap')}
            w={130}
          />
          <Select
            label="Caps count"
            aria-label={`What the caps of target ${n} count`}
            data={[
              { value: 'deliveries', label: 'Leads delivered' },
              { value: 'ftds', label: 'FTDs recorded' },
            ]}
            value={row.cap_counts}
            onChange={(v) => onChange({ cap_counts: (v ?? 'deliveries') as TargetRow['cap_counts'] })}
            allowDeselect={false}
            error={err('cap_counts')}
            w={170}
          />
          <CountryValues
            label={`Daily caps per country, target ${n}`}
            description="A country listed here has its own daily cap in this flow"
            valueLabel="Cap"
            rows={row.country_caps}
            onChange={(country_caps) => onChange({ country_caps })}
            error={err('country_caps')}
            addLabel="Add a country cap"
          />
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

function ScheduleRow({
  row,
  n,
  error,
  onChange,
}: {
  row: TargetRow;
  n: number;
  error?: string;
  onChange: (patch: Partial<TargetRow>) => void;
}) {
  return (
    <Table.Tr data-testid="target-schedule">
      <Table.Td />
      <Table.Td colSpan={6}>
        <Group align="flex-start">
          <TextInput
            label="Time zone"
            aria-label={`Time zone of target ${n}`}
            value={row.timezone}
            onChange={(e) => onChange({ timezone: e.currentTarget.value })}
            w={200}
          />
          <Checkbox.Group label="Days" value={row.days} onChange={(days) => onChange({ days })}>
            <Group gap="xs" mt={8}>
              {WEEKDAYS.map((d, i) => (
                <Checkbox key={d} value={String(i + 1)} label={d} />
              ))}
            </Group>
          </Checkbox.Group>
          <TextInput
            label="From"
            aria-label={`Open from, target ${n}`}
            placeholder="HH:MM"
            value={row.from}
            onChange={(e) => onChange({ from: e.currentTarget.value })}
            w={90}
          />
          <TextInput
            label="To"
            aria-label={`Open until, target ${n}`}
            placeholder="HH:MM"
            value={row.to}
            onChange={(e) => onChange({ to: e.currentTarget.value })}
            w={90}
          />
        </Group>
        {error && (
          <Text c="red" size="sm" mt={4} role="alert">
            Schedule: {error}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}
