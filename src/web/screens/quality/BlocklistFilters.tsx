import { Button, Group, Select, Switch, TextInput } from '@mantine/core';
import { useEffect, useState } from 'react';
import { GLOBAL, KIND_OPTIONS, type ProviderChoice } from './entries';

export interface Filters {
  kind: string;
  /** A provider's id, GLOBAL, or '' for any. */
  provider: string;
  value: string;
  expired: boolean;
}

interface Props {
  value: Filters;
  providers: ProviderChoice;
  /** Sets the named filters ('' or false clears one) in one URL change. */
  onChange: (patch: Partial<Filters>) => void;
}

/** Kind, scope, an exact value and "show expired"; the value is a draft until Enter or leaving the box. */
export function BlocklistFilters({ value, providers, onChange }: Props) {
  const [draft, setDraft] = useState(value.value);
  useEffect(() => setDraft(value.value), [value.value]);
  const apply = () => draft.trim() !== value.value && onChange({ value: draft.trim() });
  const any = value.kind || value.provider || value.value || value.expired;
  const scopes = [...(providers.global ? [{ value: GLOBAL, label: 'Global' }] : []), ...providers.options];

  return (
    <Group align="flex-end" role="search" aria-label="Blocklist filters">
      <Select
        label="Kind"
        placeholder="Any kind"
        data={KIND_OPTIONS}
        value={value.kind || null}
        onChange={(v) => onChange({ kind: v ?? '' })}
        clearable
        w={{ base: '100%', sm: 200 }}
      />
      {providers.shown && (
        <Select
          label="Scope"
          placeholder="Any scope"
          data={scopes}
          value={value.provider || null}
          onChange={(v) => onChange({ provider: v ?? '' })}
          searchable
          clearable
          w={{ base: '100%', sm: 240 }}
        />
      )}
      <TextInput
        label="Value"
        placeholder="An exact value, any spelling"
        value={draft}
        onChange={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={(e) => e.key === 'Enter' && apply()}
        onBlur={apply}
        w={{ base: '100%', sm: 260 }}
      />
      <Switch
        label="Show expired"
        checked={value.expired}
        onChange={(e) => onChange({ expired: e.currentTarget.checked })}
        mb={8}
      />
      {any && (
        <Button variant="subtle" onClick={() => onChange({ kind: '', provider: '', value: '', expired: false })}>
          Clear filters
        </Button>
      )}
    </Group>
  );
}
