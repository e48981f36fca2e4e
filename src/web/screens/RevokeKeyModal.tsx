import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, must, problemText } from '../api/client';
import type { ApiKey } from './keys';

export function RevokeKeyModal({ apiKey, opened, onClose }: { apiKey: ApiKey | null; opened: boolean; onClose: () => void }) {
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: async (id: string) => must(await api.POST('/api/api-keys/{id}/revoke', { params: { path: { id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
      close();
    },
  });
  function close() {
    revoke.reset();
    onClose();
  }

  return (
    <Modal opened={opened && apiKey !== null} onClose={close} title="Revoke API key">
      {apiKey && (
        <Stack>
          <Text>
            Revoke <b>{apiKey.name}</b> ({apiKey.prefix})? Every request made with it fails from now on. This cannot be undone.
          </Text>
          {revoke.isError && (
            <Alert color="red" role="alert">
              {problemText(revoke.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={revoke.isPending} onClick={() => revoke.mutate(apiKey.id)}>
              Revoke key
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
