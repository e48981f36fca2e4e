import { Alert, Button, Checkbox, Group, List, Modal, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText } from '../api/client';
import type { paths } from '../api/schema';
import { endOfDay, type ApiKeyCreated } from './keys';
import { useClock } from '../ui/useClock';
import { ShownOnce } from '../ui/ShownOnce';

type Scope = paths['/api/api-keys']['post']['requestBody']['content']['application/json']['scopes'][number];

/** "New key": the form, then the secret, shown once. Closing forgets the secret. */
export function NewKeyModal({ opened, onClose, held }: { opened: boolean; onClose: () => void; held: string[] }) {
  const queryClient = useQueryClient();
  const clock = useClock();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiry, setExpiry] = useState('');
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  // Offered: what your role holds that a key can use at all (the server reads it from the routes'
  // declared access); the allow-list, hosting and the like need a signed-in person.
  const catalog = useQuery({
    queryKey: ['permissions'],
    queryFn: async () => must(await api.GET('/api/permissions')),
    staleTime: Infinity,
  });
  const forKeys = new Set(
    catalog.data?.modules.flatMap((m) => m.actions.filter((a) => a.key_usable).map((a) => a.permission)),
  );
  const offered = catalog.data ? held.filter((p) => forKeys.has(p)) : [];
  const personOnly = catalog.data ? held.filter((p) => !forKeys.has(p)) : [];
  const create = useMutation({
    mutationFn: async () =>
      must(
        await api.POST('/api/api-keys', {
          // Offered scopes come from whoami, which lists only permission strings the server knows.
          body: { name, scopes: scopes as Scope[], expires_at: expiry ? endOfDay(expiry, clock.zone) : null },
        }),
      ),
    onSuccess: async (key) => {
      setCreated(key);
      await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });

  function close() {
    setName('');
    setScopes([]);
    setExpiry('');
    setCreated(null);
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
      size="lg"
      closeOnClickOutside={!created}
    >
      {created ? (
        <ShownOnce
          title="Copy this secret now"
          message={`This is the only time the secret of “${created.name}” is shown. Store it in your secret manager; if it is lost, revoke the key and make a new one.`}
          value={created.secret}
          testId="key-secret"
          onDone={close}
        />
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <Alert color="blue" title="Recommended practices">
              <List size="sm">
                <List.Item>
                  One key per integration, named after it, so one can be revoked without breaking the others.
                </List.Item>
                <List.Item>Give a temporary key an expiry date.</List.Item>
                <List.Item>Keep the secret in a secret manager, never in code or chat.</List.Item>
                <List.Item>Grant only the scopes the integration needs.</List.Item>
              </List>
            </Alert>
            <TextInput
              label="Name"
              placeholder="e.g. CRM sync"
              required
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Checkbox.Group
              label="Scopes"
              description={
                'Only permissions your role holds can be granted' +
                (personOnly.length
                  ? `; not offered, since only a signed-in person can use them: ${personOnly.join(', ')}.`
                  : '.')
              }
              value={scopes}
              onChange={setScopes}
            >
              <SimpleGrid cols={{ base: 1, sm: 2 }} mt="xs">
                {offered.map((p) => (
                  <Checkbox key={p} value={p} label={p} />
                ))}
              </SimpleGrid>
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
            {scopes.length === 0 && (
              <Text size="xs" c="dimmed" ta="right">
                Pick at least one scope.
              </Text>
            )}
          </Stack>
        </form>
      )}
    </Modal>
  );
}
