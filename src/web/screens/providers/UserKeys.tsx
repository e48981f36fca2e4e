import { Alert, Badge, Button, Drawer, Group, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useClock } from '../../ui/useClock';

const STATUS_COLOR = { active: 'green', expired: 'gray', revoked: 'red' } as const;

/** A portal user's API keys, in a drawer: an operator may revoke any of them. */
export function UserKeys({
  providerId,
  user,
  canEdit,
  onClose,
}: {
  providerId: string;
  user: { id: string; email: string } | null;
  canEdit: boolean;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const clock = useClock();
  const queryKey = ['provider-user-keys', providerId, user?.id];
  const keys = useQuery({
    queryKey,
    enabled: user !== null,
    queryFn: async () =>
      must(
        await api.GET('/api/traffic-providers/{id}/users/{user_id}/api-keys', {
          params: { path: { id: providerId, user_id: user!.id }, query: { limit: 100 } },
        }),
      ),
  });
  const revoke = useMutation({
    mutationFn: async (keyId: string) =>
      must(
        await api.DELETE('/api/traffic-providers/{id}/users/{user_id}/api-keys/{key_id}', {
          params: { path: { id: providerId, user_id: user!.id, key_id: keyId } },
        }),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey }),
  });

  return (
    <Drawer opened={user !== null} onClose={onClose} position="right" title={`API keys of ${user?.email ?? ''}`}>
      <Stack data-testid="portal-user-keys">
        <Text size="xs" c="dimmed">
          Times in {clock.zone}
        </Text>
        {revoke.isError && (
          <Alert color="red" role="alert">
            {problemText(revoke.error)}
          </Alert>
        )}
        {keys.isError && (
          <Alert color="red" role="alert">
            {problemText(keys.error)}
          </Alert>
        )}
        {keys.isPending ? (
          <Loading />
        ) : keys.data?.data.length === 0 ? (
          <Text size="sm">No API keys.</Text>
        ) : (
          keys.data?.data.map((k) => (
            <Stack key={k.id} gap={2} data-testid="portal-user-key">
              <Group justify="space-between" wrap="nowrap">
                <Text fw={500} truncate="end">
                  {k.name}
                </Text>
                <Badge color={STATUS_COLOR[k.status]}>{k.status}</Badge>
              </Group>
              <Text size="xs" c="dimmed">
                {k.prefix} · {k.scopes.join(', ')} · last used{' '}
                {k.last_used_at ? clock.dateTime(k.last_used_at) : 'never'}
                {k.expires_at ? ` · expires ${clock.dateTime(k.expires_at)}` : ''}
              </Text>
              {canEdit && k.status === 'active' && (
                <Button
                  size="xs"
                  color="red"
                  variant="light"
                  w="fit-content"
                  loading={revoke.isPending && revoke.variables === k.id}
                  onClick={() => revoke.mutate(k.id)}
                >
                  Revoke
                </Button>
              )}
            </Stack>
          ))
        )}
      </Stack>
    </Drawer>
  );
}
