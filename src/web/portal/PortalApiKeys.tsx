import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../api/client';
import type { paths } from '../api/schema';
import { Loading } from '../Loading';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { usePagedList } from '../ui/ListPage';
import { TableBox } from '../ui/TableBox';
import { useClock } from '../ui/useClock';
import { ZoneNote } from '../ui/ZoneNote';
import { useCanEdit } from './me';
import { NewPortalKeyModal } from './NewPortalKeyModal';

export type PortalKey =
  paths['/api/portal/api-keys']['get']['responses'][200]['content']['application/json']['data'][number];

const STATUS_COLOR = { active: 'green', expired: 'gray', revoked: 'red' } as const;
/** Columns hidden on a phone: a key's name, status and Revoke stay. */
const WIDE_ONLY = ['Prefix', 'Scopes', 'Created', 'Expires', 'Last used'];
const HEADERS = ['Name', 'Prefix', 'Scopes', 'Created', 'Expires', 'Last used', 'Status', ''];

/** The provider user's own API keys (portal scopes only): make one (shown once), revoke one. */
export default function PortalApiKeys() {
  const queryClient = useQueryClient();
  const canEdit = useCanEdit();
  const clock = useClock();
  const keys = usePagedList(['portal-api-keys'], async (cursor) =>
    must(await api.GET('/api/portal/api-keys', { params: { query: { limit: 100, cursor } } })),
  );
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<PortalKey | null>(null);
  const rows = keys.data?.pages.flatMap((p) => p.data) ?? [];

  async function revoke() {
    must(await api.DELETE('/api/portal/api-keys/{id}', { params: { path: { id: revoking!.id } } }));
    await queryClient.invalidateQueries({ queryKey: ['portal-api-keys'] });
    setRevoking(null);
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          API keys
        </Title>
        {canEdit && <Button onClick={() => setCreating(true)}>New key</Button>}
      </Group>
      <Text size="sm" c="dimmed">
        A key reads your leads and statistics from a script (portal:view), and with portal:edit also changes your
        postbacks. Send it as <code>Authorization: Bearer …</code>.
      </Text>
      <ZoneNote />
      {keys.isError && (
        <Alert color="red" role="alert">
          {problemText(keys.error)}
        </Alert>
      )}
      {keys.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Text data-testid="portal-keys-empty">No API keys yet.</Text>
      ) : (
        <TableBox minWidth={900}>
          <Table striped data-testid="portal-keys-table">
            <Table.Thead>
              <Table.Tr>
                {HEADERS.map((h) => (
                  <Table.Th key={h} visibleFrom={WIDE_ONLY.includes(h) ? 'sm' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((k) => (
                <Table.Tr key={k.id} data-testid="portal-key-row">
                  <Table.Td fw={500}>{k.name}</Table.Td>
                  <Table.Td visibleFrom="sm" ff="monospace">
                    {k.prefix}
                  </Table.Td>
                  <Table.Td visibleFrom="sm">{k.scopes.join(', ')}</Table.Td>
                  <Table.Td visibleFrom="sm">{clock.dateTime(k.created_at)}</Table.Td>
                  <Table.Td visibleFrom="sm">{k.expires_at ? clock.dateTime(k.expires_at) : 'Never'}</Table.Td>
                  <Table.Td visibleFrom="sm">{k.last_used_at ? clock.dateTime(k.last_used_at) : 'Never'}</Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLOR[k.status]} data-testid="portal-key-status">
                      {k.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {canEdit && k.status === 'active' && (
                      <Button size="xs" color="red" variant="light" onClick={() => setRevoking(k)}>
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
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
      <NewPortalKeyModal opened={creating} onClose={() => setCreating(false)} />
      <ConfirmDialog
        opened={revoking !== null}
        title="Revoke API key"
        confirmLabel="Revoke key"
        onConfirm={revoke}
        onClose={() => setRevoking(null)}
      >
        <Text>
          Revoke <b>{revoking?.name}</b>? Every request made with it fails from now on. This cannot be undone.
        </Text>
      </ConfirmDialog>
    </Stack>
  );
}
