import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorAlert } from '../../ui/EditorPage';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { TableBox } from '../../ui/TableBox';

type Session = paths['/api/profile/sessions']['get']['responses'][200]['content']['application/json']['data'][number];

/** Profile → Sessions: where you are signed in; sign out one, or everywhere else. */
export function Sessions() {
  const { dateTime: when } = useClock();
  const queryClient = useQueryClient();
  const sessions = useQuery({
    queryKey: ['profile', 'sessions'],
    queryFn: async () => must(await api.GET('/api/profile/sessions', { params: { query: { limit: 500 } } })).data,
  });
  const [target, setTarget] = useState<Session | 'others' | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const others = sessions.data?.filter((s) => !s.current).length ?? 0;

  async function revoke() {
    let message = '';
    if (target === 'others') {
      const { revoked } = must(await api.POST('/api/profile/sessions/revoke-others'));
      message = `Signed out ${revoked} other session${revoked === 1 ? '' : 's'}.`;
    } else if (target) {
      must(await api.DELETE('/api/profile/sessions/{id}', { params: { path: { id: target.id } } }));
      message = `Signed out ${target.device}.`;
    }
    setTarget(null);
    // The table is fresh before the confirmation shows, so the two never disagree.
    await queryClient.invalidateQueries({ queryKey: ['profile', 'sessions'] });
    setDone(message);
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2} size="h3">
          Sessions
        </Title>
        <Button variant="default" color="red" disabled={others === 0} onClick={() => setTarget('others')}>
          Sign out everywhere else
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        Where you are signed in. Signing a session out takes effect on its next request.
      </Text>
      <ZoneNote />
      {done && (
        <Alert color="green" data-testid="sessions-done" withCloseButton onClose={() => setDone(null)}>
          {done}
        </Alert>
      )}
      {sessions.isPending ? (
        <Loading />
      ) : sessions.isError ? (
        <ErrorAlert error={sessions.error} />
      ) : (
        <TableBox minWidth={600}>
          <Table striped data-testid="sessions-table">
            <Table.Thead>
              <Table.Tr>
                {['Device', 'IP address', 'Signed in', 'Last seen', ''].map((h) => (
                  <Table.Th key={h} visibleFrom={h === 'IP address' || h === 'Signed in' ? 'sm' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {sessions.data.map((s) => (
                <Table.Tr key={s.id} data-session={s.id}>
                  <Table.Td title={s.user_agent}>
                    {s.device}{' '}
                    {s.current && (
                      <Badge size="sm" variant="light">
                        This session
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td visibleFrom="sm">{s.ip}</Table.Td>
                  <Table.Td visibleFrom="sm">{when(s.created_at)}</Table.Td>
                  <Table.Td>{when(s.last_seen_at)}</Table.Td>
                  <Table.Td>
                    {!s.current && (
                      <Button size="compact-sm" variant="subtle" color="red" onClick={() => setTarget(s)}>
                        Sign out
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      <ConfirmDialog
        opened={target !== null}
        title={target === 'others' ? 'Sign out everywhere else?' : 'Sign out this session?'}
        confirmLabel="Sign out"
        onConfirm={revoke}
        onClose={() => setTarget(null)}
      >
        <Text size="sm">
          {target === 'others'
            ? `Your ${others} other session${others === 1 ? '' : 's'} will end; this one stays.`
            : target
              ? `${target.device} at ${target.ip} will be signed out.`
              : null}
        </Text>
      </ConfirmDialog>
    </Stack>
  );
}
