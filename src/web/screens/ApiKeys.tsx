import { Alert, Badge, Button, Group, SegmentedControl, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { useWhoami } from '../whoami';
import { staleness, type ApiKey } from './keys';
import { useClock } from '../ui/useClock';
import { ZoneNote } from '../ui/ZoneNote';
import { NewKeyModal } from './NewKeyModal';
import { RevokeKeyModal } from './RevokeKeyModal';
import { usePagedList } from '../ui/ListPage';
import { TableBox } from '../ui/TableBox';

const STATUS_COLOR = { active: 'green', expired: 'gray', revoked: 'red' } as const;
const SHOW_REVOKED_KEY = 'leadgate.api-keys.show-revoked';

/** Whether revoked keys are listed (off by default: they are history), remembered in this browser. */
function useShowRevoked(): [boolean, (v: boolean) => void] {
  const [show, setShow] = useState(() => {
    try {
      return localStorage.getItem(SHOW_REVOKED_KEY) === '1';
    } catch {
      return false;
    }
  });
  return [
    show,
    (v) => {
      setShow(v);
      try {
        localStorage.setItem(SHOW_REVOKED_KEY, v ? '1' : '0');
      } catch {
        // storage refused: the choice holds for this page only
      }
    },
  ];
}

export default function ApiKeys() {
  const whoami = useWhoami();
  // Admins may look at (and revoke) every operator's keys, e.g. when someone leaves.
  const [everyone, setEveryone] = useState(false);
  const all = everyone && Boolean(whoami.data?.admin);
  const keys = usePagedList(['api-keys', all ? 'all' : 'mine'], async (cursor) =>
    must(await api.GET('/api/api-keys', { params: { query: { limit: 100, cursor, all } } })),
  );
  const [creating, setCreating] = useState(false);
  // The key stays set while the confirm modal animates closed, so it never renders empty.
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [confirmOpen, setConfirmOpen] = useState(false);

  // A key's scopes must be held by the operator's role: with none held, no key can be made.
  const held = whoami.data?.permissions ?? [];
  const owners = useOwners(all);
  const [showRevoked, setShowRevoked] = useShowRevoked();
  const loaded = keys.data?.pages.flatMap((p) => p.data) ?? [];
  const revokedCount = loaded.filter((k) => k.status === 'revoked').length;
  const rows = showRevoked ? loaded : loaded.filter((k) => k.status !== 'revoked');

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          API keys
        </Title>
        <Button onClick={() => setCreating(true)} disabled={!whoami.data || held.length === 0}>
          New key
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        An API key acts as you, limited to its scopes and to what your role holds at the time of each request.
      </Text>
      <ZoneNote />
      {whoami.data?.admin && (
        <SegmentedControl
          aria-label="Whose keys"
          value={everyone ? 'all' : 'mine'}
          onChange={(v) => setEveryone(v === 'all')}
          data={[
            { value: 'mine', label: 'My keys' },
            { value: 'all', label: "Every operator's keys" },
          ]}
          w="fit-content"
        />
      )}
      {revokedCount > 0 && (
        <Switch
          label={`Show revoked keys (${revokedCount})`}
          checked={showRevoked}
          onChange={(e) => setShowRevoked(e.currentTarget.checked)}
          data-testid="show-revoked"
        />
      )}
      {whoami.data && held.length === 0 && (
        <Alert color="yellow">Your role holds no permissions, so you cannot make API keys.</Alert>
      )}
      {keys.isError && (
        <Alert color="red" role="alert">
          {problemText(keys.error)}
        </Alert>
      )}
      {keys.isPending ? (
        <Loading />
      ) : rows.length === 0 && !keys.isError ? (
        <Text data-testid="keys-empty">
          {revokedCount > 0
            ? 'Every key here is revoked.'
            : all
              ? 'No operator has API keys yet.'
              : 'You have no API keys yet. Make one with “New key”.'}
        </Text>
      ) : (
        <TableBox minWidth={960}>
          <Table striped data-testid="keys-table">
            <Table.Thead>
              <Table.Tr>
                {[
                  'Name',
                  ...(all ? ['Owner'] : []),
                  'Prefix',
                  'Scopes',
                  'Created',
                  'Expires',
                  'Last used',
                  'Status',
                  '',
                ].map((h) => (
                  <Table.Th key={h} visibleFrom={WIDE_ONLY.includes(h) ? 'sm' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((key) => (
                <KeyRow
                  key={key.id}
                  apiKey={key}
                  owner={all ? (owners.data?.get(key.operator_id) ?? '…') : null}
                  onRevoke={() => {
                    setRevoking(key);
                    setConfirmOpen(true);
                  }}
                />
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {keys.hasNextPage && (
        <Button variant="default" onClick={() => keys.fetchNextPage()} loading={keys.isFetchingNextPage}>
          Load more
        </Button>
      )}
      <NewKeyModal opened={creating} onClose={() => setCreating(false)} held={held} />
      <RevokeKeyModal apiKey={revoking} opened={confirmOpen} onClose={() => setConfirmOpen(false)} />
    </Stack>
  );
}

/** Operator names by id, for the Owner column (admins hold operators:view). */
function useOwners(enabled: boolean) {
  return useQuery({
    queryKey: ['operators', 'names'],
    enabled,
    queryFn: async () => {
      const names = new Map<string, string>();
      let cursor: string | undefined;
      do {
        const page = must(await api.GET('/api/operators', { params: { query: { limit: 500, cursor } } }));
        for (const o of page.data) names.set(o.id, `${o.name} <${o.email}>`);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return names;
    },
  });
}

/** Columns hidden on a phone: a key's name, status and Revoke stay. */
const WIDE_ONLY = ['Owner', 'Prefix', 'Scopes', 'Created', 'Expires', 'Last used'];

function KeyRow({ apiKey, owner, onRevoke }: { apiKey: ApiKey; owner: string | null; onRevoke: () => void }) {
  const { dateTime: formatTime } = useClock();
  const stale = staleness(apiKey);
  return (
    <Table.Tr data-testid="key-row" data-key-id={apiKey.id}>
      <Table.Td>
        <Group gap="xs">
          <Text fw={500}>{apiKey.name}</Text>
          {stale && (
            <Badge color="orange" variant="light" data-testid="key-stale">
              {stale}
            </Badge>
          )}
        </Group>
      </Table.Td>
      {owner !== null && (
        <Table.Td visibleFrom="sm" data-testid="key-owner">
          {owner}
        </Table.Td>
      )}
      <Table.Td visibleFrom="sm">
        <Text ff="monospace" size="sm">
          {apiKey.prefix}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Group gap={4}>
          {apiKey.scopes.map((s) => (
            <Badge key={s} variant="outline" size="sm" tt="none">
              {s}
            </Badge>
          ))}
        </Group>
      </Table.Td>
      <Table.Td visibleFrom="sm">{formatTime(apiKey.created_at)}</Table.Td>
      <Table.Td visibleFrom="sm">{apiKey.expires_at ? formatTime(apiKey.expires_at) : 'Never'}</Table.Td>
      <Table.Td visibleFrom="sm">{apiKey.last_used_at ? formatTime(apiKey.last_used_at) : 'Never'}</Table.Td>
      <Table.Td>
        <Badge color={STATUS_COLOR[apiKey.status]} data-testid="key-status">
          {apiKey.status}
        </Badge>
      </Table.Td>
      <Table.Td>
        {apiKey.status === 'active' && (
          <Button size="xs" color="red" variant="light" onClick={onRevoke}>
            Revoke
          </Button>
        )}
      </Table.Td>
    </Table.Tr>
  );
}
