import { Group, MultiSelect, NumberInput, Stack, Text } from '@mantine/core';
import type { FieldErrors } from '../../ui/fields';
import { FLAG_OPTIONS, type Flag } from '../../ui/flags';
import type { PartnerForm } from './form';

/** The partner's quality rule: leads it is never offered, by their fraud flags or their quality score. */
export function QualityFields({
  form,
  errors,
  set,
}: {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}) {
  return (
    <Stack gap="xs" data-testid="partner-quality">
      <Text fw={600}>Lead quality</Text>
      <Group align="flex-start">
        <MultiSelect
          label="Refuse leads flagged"
          description="Leads with any of these flags go to the flow's other partners"
          placeholder={form.refuseFlags.length ? undefined : 'None: takes flagged leads'}
          data={FLAG_OPTIONS}
          value={form.refuseFlags}
          onChange={(v) => set({ refuseFlags: v as Flag[] })}
          error={errors.at('quality.refuse_flags') ?? errors.at('quality')}
          w={420}
          maw="100%"
        />
        <NumberInput
          label="Minimum quality score"
          description="0–100; empty: any score"
          placeholder="Any"
          value={form.minScore}
          onChange={(v) => set({ minScore: v })}
          allowDecimal={false}
          min={0}
          max={100}
          error={errors.at('quality.min_score')}
          w={200}
        />
      </Group>
    </Stack>
  );
}
