import { Group, NumberInput, Select, Stack, Switch, Text } from '@mantine/core';
import { CountryValues } from '../../ui/CountryValues';
import type { FieldErrors } from '../../ui/fields';
import type { PartnerForm } from './form';

const MODELS = [
  { value: '', label: 'No deal (revenue as its postbacks report it)' },
  { value: 'cpl', label: 'CPL: a price per delivered lead' },
  { value: 'cpa', label: 'CPA: a price per FTD' },
];

/** What the partner pays: the revenue recorded on each lead when it is delivered (CPL) or converts (CPA). */
export function DealFields({
  form,
  errors,
  set,
}: {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}) {
  return (
    <Stack gap="xs" data-testid="partner-deal">
      <Text fw={600}>Deal</Text>
      <Group align="flex-start">
        <Select
          label="What the partner pays"
          data={MODELS}
          value={form.dealModel}
          onChange={(v) => set({ dealModel: (v ?? '') as PartnerForm['dealModel'] })}
          allowDeselect={false}
          error={errors.at('deal.model') ?? errors.at('deal')}
          w={320}
        />
        {form.dealModel !== '' && (
          <NumberInput
            label="Price (USD)"
            value={form.dealAmount}
            onChange={(v) => set({ dealAmount: v })}
            min={0}
            error={errors.at('deal.amount')}
            w={140}
          />
        )}
      </Group>
      {form.dealModel !== '' && (
        <>
          <CountryValues
            label="Prices per country"
            description="Replace the price for leads from these countries; recorded on each lead when it is paid for, so a later change rewrites nothing"
            valueLabel="Price"
            decimal
            rows={form.dealByCountry}
            onChange={(dealByCountry) => set({ dealByCountry })}
            error={errors.at('deal.by_country')}
            addLabel="Add a country price"
          />
          {form.dealModel === 'cpl' && (
            <Group align="flex-start">
              <Switch
                mt={30}
                label="Conversion-rate guarantee"
                checked={form.hasCrg}
                onChange={(e) => set({ hasCrg: e.currentTarget.checked })}
              />
              {form.hasCrg && (
                <>
                  <NumberInput
                    label="Promised FTD rate (%)"
                    value={form.crgRate}
                    onChange={(v) => set({ crgRate: v })}
                    min={0}
                    max={100}
                    error={errors.at('deal.crg.rate') ?? errors.at('deal.crg')}
                    w={180}
                  />
                  <Select
                    label="Guarantee period"
                    data={[
                      { value: 'month', label: 'Calendar month' },
                      { value: 'week', label: 'ISO week' },
                    ]}
                    value={form.crgPeriod}
                    onChange={(v) => set({ crgPeriod: (v ?? 'month') as PartnerForm['crgPeriod'] })}
                    allowDeselect={false}
                    error={errors.at('deal.crg.period')}
                    w={180}
                  />
                </>
              )}
            </Group>
          )}
        </>
      )}
    </Stack>
  );
}
