import { Autocomplete, Button, Group, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';

// The API takes any action name and publishes no list of them; these are the ones the server
// writes today, offered as suggestions (any other name can still be typed).
const ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'api_key.created',
  'api_key.revoked',
  'operator.created',
  'operator.updated',
  'operator.deleted',
  'role.created',
  'role.updated',
  'role.deleted',
  'profile.password_changed',
  'settings.ip_allowlist_updated',
  'flow.created',
  'flow.updated',
  'flow.archived',
  'flow.deleted',
  'partner.created',
  'partner.updated',
  'partner.archived',
  'partner.deleted',
  'partner.postback_token_rotated',
  'campaign.created',
  'campaign.updated',
  'campaign.archived',
  'campaign.deleted',
  'traffic_provider.created',
  'traffic_provider.updated',
  'traffic_provider.archived',
  'traffic_provider.deleted',
  'traffic_provider.token_rotated',
  'lead.exported',
  'lead.postback',
  'lead.redelivered',
];

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
  // The typed action is a draft until picked, Enter or leaving the box: no request per keystroke.
  const [draft, setDraft] = useState(action);
  useEffect(() => setDraft(action), [action]);
  const apply = (value: string) => value.trim() !== action && onChange({ action: value.trim() });

  return (
    <Group align="flex-end">
      <Autocomplete
        label="Action"
        placeholder="Any action"
        data={ACTIONS}
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
