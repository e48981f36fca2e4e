import { SegmentedControl, Stack, Text } from '@mantine/core';

type Status = 'active' | 'paused';

/** Active / paused switch of flows, partners, campaigns and providers; `paused` says what pausing does. */
export function StatusControl({
  value,
  onChange,
  paused = 'Paused',
}: {
  value: Status;
  onChange: (s: Status) => void;
  paused?: string;
}) {
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>
        Status
      </Text>
      <SegmentedControl
        aria-label="Status"
        value={value}
        onChange={(v) => onChange(v as Status)}
        data={[
          { value: 'active', label: 'Active' },
          { value: 'paused', label: paused },
        ]}
      />
    </Stack>
  );
}
