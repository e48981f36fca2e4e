import { Alert, Button, Checkbox, Group, Modal, Stack, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText } from '../api/client';
import { endOfDay } from '../screens/keys';
import { ShownOnce } from '../ui/ShownOnce';
import { useClock } from '../ui/useClock';

type Scope = 'portal:view' | 'portal:edit';

/** "New key" in the portal: the form, then the secret, shown once. Closing forgets the secret. */
export function NewPortalKeyModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const queryClient = useQueryClient();
  const clock = useClock();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['portal:view']);
  const [expiry, setExpiry] = useState('');
  const create = useMutation({
    mutationFn: async () =>
      must(
        await api.POST('/api/portal/api-keys', {
          body: { name, scopes: scopes as Scope[], expires_at: expiry ? endOfDay(expiry, clock.zone) : null },
        }),
        { name: 'Name', scopes: 'Scopes', expires_at: 'Expires on' },
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['portal-api-keys'] }),
  });
  const created = create.data;

  function close() {
    setName('');
    setScopes(['portal:view']);
    setExpiry('');
    create.reset();
    onClose();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate();
  }

  return (
    <Modal
      opened={opened}
      onClose={close}
      title={created ? 'Your new API key' : 'New API key'}
      closeOnClickOutside={!created}
    >
      {created ? (
        <ShownOnce
          title="Copy this secret now"
          message={`This is the only time the secret of “${created.name}” is shown. If it is lost, revoke the key and make a new one.`}
          value={created.secret}
          testId="portal-key-secret"
          onDone={close}
        />
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <TextInput
              label="Name"
              placeholder="e.g. our tracker"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Checkbox.Group label="Scopes" value={scopes} onChange={setScopes}>
              <Stack gap="xs" mt="xs">
                <Checkbox value="portal:view" label="portal:view (read leads, statistics, campaigns)" />
                <Checkbox value="portal:edit" label="portal:edit (also change postbacks)" />
              </Stack>
            </Checkbox.Group>
            <TextInput
              label="Expires on (optional)"
              description={`The key stops working at the end of this day (${clock.zone}).`}
              type="date"
              value={expiry}
              onChange={(e) => setExpiry(e.currentTarget.value)}
            />
            {create.isError && (
              <Alert color="red" role="alert">
                {problemText(create.error)}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending} disabled={scopes.length === 0}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
