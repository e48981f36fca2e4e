import { Select, TextInput } from '@mantine/core';

// Browsers leave UTC out of their list of zones; it is the server's default, so it leads here.
const TIMEZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

/** An IANA time zone picker; a stored zone this browser does not list is kept as an option. */
export function TimezoneSelect({
  value,
  onChange,
  error,
  description,
  w,
}: {
  value: string;
  onChange: (tz: string) => void;
  error?: string;
  description?: string;
  w?: number;
}) {
  return (
    <Select
      w={w}
      label="Time zone"
      description={description}
      searchable
      data={TIMEZONES.includes(value) ? TIMEZONES : [value, ...TIMEZONES]}
      value={value}
      onChange={(v) => onChange(v ?? '')}
      error={error}
      allowDeselect={false}
    />
  );
}

/** Country codes typed as "DE, AT": upper-cased, and undefined when empty (no filter). */
export function CountriesInput({
  value,
  onChange,
  placeholder,
}: {
  value: string[] | undefined;
  onChange: (codes: string[] | undefined) => void;
  placeholder: string;
}) {
  return (
    <TextInput
      label="Country"
      placeholder={placeholder}
      value={(value ?? []).join(', ')}
      onChange={(e) => {
        const codes = e.currentTarget.value.split(',').map((c) => c.trim().toUpperCase());
        onChange(codes.some(Boolean) ? codes : undefined);
      }}
    />
  );
}
