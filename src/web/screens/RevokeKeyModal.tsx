import { Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { api, must } from '../api/client';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import type { ApiKey } from './keys';

export function RevokeKeyModal({
  apiKey,
  opened,
  onClose,
}: {
  apiKey: ApiKey | null;
  opened: boolean;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  async function revoke() {
    must(await api.POST('/api/api-keys/{id}/revoke', { params: { path: { id: apiKey!.id } } }));
    await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    onClose();
  }
  return (
    <ConfirmDialog
      opened={opened && apiKey !== null}
      title="Revoke API key"
      confirmLabel="Revoke key"
      onConfirm={revoke}
      onClose={onClose}
    >
      {apiKey && (
        <Text>
          Revoke <b>{apiKey.name}</b> ({apiKey.prefix})? Every request made with it fails from now on. This cannot be
          undone.
        </Text>
      )}
    </ConfirmDialog>
  );
}
