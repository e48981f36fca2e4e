import { Badge, Button, Group, PasswordInput, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { ConfirmDialog } from '../../ui/ConfirmDialog';

type Operator = paths['/api/operators/{id}']['get']['responses'][200]['content']['application/json'];

/**
 * Whether the operator signs in with a second factor, and the way back in for one who lost both
 * their device and their recovery codes: turning it off (never for yourself; that asks for a
 * code, in your profile).
 */
export function TwoFactorReset({ operator, canEdit, self }: { operator: Operator; canEdit: boolean; self: boolean }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  // Turning someone's second factor off is for a person: the API asks for your own password.
  const [password, setPassword] = useState('');
  async function turnOff() {
    const body = { two_factor: false as const, current_password: password };
    const updated = must(await api.PATCH('/api/operators/{id}', { params: { path: { id: operator.id } }, body }));
    queryClient.setQueryData(['operator', operator.id], updated);
    await queryClient.invalidateQueries({ queryKey: ['operators'] });
    close();
  }
  function close() {
    setPassword('');
    setOpen(false);
  }
  return (
    <Group data-testid="operator-two-factor">
      <Text size="sm" fw={500}>
        Two-factor sign-in
      </Text>
      <Badge color={operator.two_factor ? 'green' : 'gray'}>{operator.two_factor ? 'on' : 'off'}</Badge>
      {operator.two_factor && !self && (
        <Button size="xs" variant="light" color="red" onClick={() => setOpen(true)} disabled={!canEdit}>
          Turn off
        </Button>
      )}
      <ConfirmDialog
        opened={open}
        title="Turn off two-factor sign-in?"
        confirmLabel="Turn off"
        onConfirm={turnOff}
        onClose={close}
      >
        <Text size="sm">
          {operator.name} will sign in with their password alone until they turn it on again in their profile, and their
          recovery codes stop working, and they are signed out everywhere. Do this only once you are sure it is them
          asking (e.g. they lost their phone and their codes).
        </Text>
        <PasswordInput
          label="Your current password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          data-autofocus
        />
      </ConfirmDialog>
    </Group>
  );
}
