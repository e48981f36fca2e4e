import { Checkbox, MultiSelect, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { allOptions } from '../../ui/options';

export interface RoleScope {
  traffic_provider_ids: string[] | null;
  partner_ids: string[] | null;
}

const PICKERS = [
  {
    key: 'traffic_provider_ids',
    path: '/api/traffic-providers',
    permission: 'traffic_providers:view',
    every: 'Every traffic provider',
    only: 'Only these traffic providers',
  },
  {
    key: 'partner_ids',
    path: '/api/partners',
    permission: 'partners:view',
    every: 'Every partner',
    only: 'Only these partners',
  },
] as const;

/**
 * Limits a role to some traffic providers and/or partners: its operators (and their keys) then
 * read only those accounts' leads, reports, events and records. A list the editor may not read
 * is not offered (its part of the scope is shown as it is).
 */
export function ScopePickers({
  value,
  onChange,
  held,
  readOnly,
  errorAt,
}: {
  value: RoleScope;
  onChange: (scope: RoleScope) => void;
  held: Set<string>;
  readOnly: boolean;
  errorAt: (field: string) => string | undefined;
}) {
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Scope
      </Title>
      <Text size="sm" c="dimmed">
        Limit the role to some accounts, e.g. an affiliate manager or a brand manager: its operators and their API keys
        then see only these traffic providers&apos; and partners&apos; leads, reports, exports, events and caps. A role
        limited so cannot hold the audit log, webhooks or editing flows, which reach the whole account.
      </Text>
      {PICKERS.map((p) => (
        <ScopePicker
          key={p.key}
          picker={p}
          ids={value[p.key]}
          canList={held.has(p.permission)}
          readOnly={readOnly}
          error={errorAt(`scope.${p.key}`)}
          onChange={(ids) => onChange({ ...value, [p.key]: ids })}
        />
      ))}
    </Stack>
  );
}

function ScopePicker({
  picker,
  ids,
  canList,
  readOnly,
  error,
  onChange,
}: {
  picker: (typeof PICKERS)[number];
  ids: string[] | null;
  canList: boolean;
  readOnly: boolean;
  error: string | undefined;
  onChange: (ids: string[] | null) => void;
}) {
  const options = useQuery({
    queryKey: ['options', picker.path, 'all'],
    enabled: canList,
    queryFn: () => allOptions(picker.path),
  });
  const known = new Set((options.data ?? []).map((o) => o.value));
  // Ids the list does not show (archived, or not readable) stay selectable by id, so nothing is dropped unseen.
  const data = [
    ...(options.data ?? []),
    ...(ids ?? []).filter((id) => !known.has(id)).map((id) => ({ value: id, label: id })),
  ];
  return (
    <Stack gap={6}>
      <Checkbox
        label={picker.every}
        checked={ids === null}
        disabled={readOnly || (!canList && ids !== null)}
        onChange={(e) => onChange(e.currentTarget.checked ? null : [])}
      />
      {ids !== null && (
        <MultiSelect
          label={picker.only}
          placeholder={ids.length ? undefined : 'None: this role sees none of them'}
          data={data}
          value={ids}
          onChange={onChange}
          searchable
          clearable
          disabled={readOnly || !canList}
          error={error}
          maw={720}
        />
      )}
    </Stack>
  );
}
