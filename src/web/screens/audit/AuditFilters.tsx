import { Autocomplete, Button, Group, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';

/** The operators to filter by: everyone with operators:view (first 500), otherwise only yourself. */
function useOperatorOptions() {
  const whoami = useWhoami();
  const mayList = whoami.data?.permissions.includes('operators:view') ?? false;
  const operators = useQuery({
    queryKey: ['operators', 'audit-options'],
    enabled: mayList,
    queryFn: async () => must(await api.GET('/api/operators', { params: { query: { limit: 500 } } })).data,
  });
  if (mayList) return (operators.data ?? []).map((o) => ({ value: o.id, label: `${o.name} (${o.email})` }));
  return whoami.data ? [{ value: whoami.data.operator.id, label: `${whoami.data.operator.name} (you)` }] : [];
}

interface Props {
  action: string;
  actorId: string;
  /** Sets the named filters ('' clears one) in one URL change. */
  onChange: (patch: { action?: string; actor_id?: string }) => void;
}

export function AuditFilters({ action, actorId, onChange }: Props) {
  const operators = useOperatorOptions();
  // Suggestions: every action the server records (any other name can still be typed).
  const actions = useQuery({
    queryKey: ['audit-actions'],
    queryFn: async () => must(await api.GET('/api/audit-log/actions', { params: { query: { limit: 500 } } })).data,
    staleTime: Infinity,
  });
  // The typed action is a draft until picked, Enter or leaving the box: no request per keystroke.
  const [draft, setDraft] = useState(action);
  useEffect(() => setDraft(action), [action]);
  const apply = (value: string) => value.trim() !== action && onChange({ action: value.trim() });

  return (
    <Group align="flex-end">
      <Autocomplete
        label="Action"
        placeholder="Any action"
        data={actions.data ?? []}
        value={draft}
        onChange={setDraft}
        onOptionSubmit={apply}
        onKeyDown={(e) => e.key === 'Enter' && apply(draft)}
        onBlur={() => apply(draft)}
        limit={40}
        w={300}
      />
      <Select
        label="Operator"
        placeholder="Anyone"
        searchable
        clearable
        data={operators}
        value={actorId || null}
        onChange={(v) => onChange({ actor_id: v ?? '' })}
        w={300}
      />
      {(action || actorId) && (
        <Button variant="subtle" onClick={() => onChange({ action: '', actor_id: '' })}>
          Clear filters
        </Button>
      )}
    </Group>
  );
}
