import { ActionIcon, Button, Group, Input, NumberInput, Stack, TextInput } from '@mantine/core';

// A small list of "country → number" pairs (a cap or a price per lead country), edited as rows.
// The API checks the codes and the numbers and names each bad one (`….by_country.DE`): its
// messages come in through `error`, shown under the list.

export interface CountryValue {
  key: string;
  country: string;
  value: number | string; // as typed; '' = not given
}

let seq = 0;
export const newCountryValue = (country = '', value: number | string = ''): CountryValue => ({
  key: `cv${++seq}`,
  country,
  value,
});

export const countryValuesOf = (o: Record<string, number> | undefined | null): CountryValue[] =>
  Object.entries(o ?? {}).map(([c, v]) => newCountryValue(c, v));

/** The rows as the API takes them: upper-case codes; an empty value is sent as null, for the API to name. */
export const objectOf = (rows: CountryValue[]): Record<string, number> =>
  Object.fromEntries(
    rows
      .filter((r) => r.country.trim())
      .map((r) => [r.country.trim().toUpperCase(), r.value === '' ? (null as unknown as number) : Number(r.value)]),
  );

interface Props {
  label: string;
  description?: string;
  /** What the number is, for the inputs' accessible names ("Cap", "Price"). */
  valueLabel: string;
  rows: CountryValue[];
  onChange: (rows: CountryValue[]) => void;
  decimal?: boolean;
  error?: string;
  addLabel: string;
}

export function CountryValues({
  label,
  description,
  valueLabel,
  rows,
  onChange,
  decimal = false,
  error,
  addLabel,
}: Props) {
  const update = (key: string, patch: Partial<CountryValue>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <Input.Wrapper label={label} description={description} error={error}>
      <Stack gap={6} mt={4}>
        {rows.map((r, i) => (
          <Group key={r.key} gap="xs" wrap="nowrap">
            <TextInput
              aria-label={`${label}: country ${i + 1}`}
              placeholder="DE"
              value={r.country}
              onChange={(e) => update(r.key, { country: e.currentTarget.value.toUpperCase() })}
              w={70}
              maxLength={2}
            />
            <NumberInput
              aria-label={`${label}: ${valueLabel.toLowerCase()} ${i + 1}`}
              placeholder={valueLabel}
              value={r.value}
              onChange={(v) => update(r.key, { value: v })}
              allowDecimal={decimal}
              min={0}
              w={120}
            />
            <ActionIcon
              variant="subtle"
              color="gray"
              aria-label={`Remove ${label.toLowerCase()} ${i + 1}`}
              onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
            >
              ✕
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...rows, newCountryValue()])}>
            {addLabel}
          </Button>
        </Group>
      </Stack>
    </Input.Wrapper>
  );
}
