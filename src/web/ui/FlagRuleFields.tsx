import { Group, MultiSelect, NumberInput, Stack, Text } from '@mantine/core';
import { FLAG_OPTIONS, type Flag } from './flags';

/**
 * A rule on leads by their fraud flags and quality score: a partner's quality rule (the leads it
 * refuses) or a provider's or flow's review rule (the leads held for review). The words say which.
 */
export function FlagRuleFields(p: {
  title: string;
  testId: string;
  flagsLabel: string;
  flagsDescription: string;
  noFlags: string;
  scoreLabel: string;
  scoreDescription: string;
  flags: Flag[];
  minScore: number | string;
  onFlags: (flags: Flag[]) => void;
  onMinScore: (score: number | string) => void;
  flagsError?: string;
  scoreError?: string;
}) {
  return (
    <Stack gap="xs" data-testid={p.testId}>
      <Text fw={600}>{p.title}</Text>
      <Group align="flex-start">
        <MultiSelect
          label={p.flagsLabel}
          description={p.flagsDescription}
          placeholder={p.flags.length ? undefined : p.noFlags}
          data={FLAG_OPTIONS}
          value={p.flags}
          onChange={(v) => p.onFlags(v as Flag[])}
          error={p.flagsError}
          w={420}
          maw="100%"
        />
        <NumberInput
          label={p.scoreLabel}
          description={p.scoreDescription}
          placeholder="Any"
          value={p.minScore}
          onChange={p.onMinScore}
          allowDecimal={false}
          min={0}
          max={100}
          error={p.scoreError}
          w={200}
        />
      </Group>
    </Stack>
  );
}
