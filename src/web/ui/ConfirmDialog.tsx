import { Alert, Button, Group, Modal, Stack } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { problemText } from '../api/client';

interface Props {
  opened: boolean;
  title: string;
  /** What will happen, and what it means. */
  children: ReactNode;
  confirmLabel: string;
  /** Does it; throws (e.g. via `must`) to keep the dialog open with the API's message. */
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/**
 * Confirmation before something that cannot be undone (delete, revoke, rotate). A refusal (a role
 * still held, a flow still in use) is shown inside the dialog, where the operator is looking.
 */
export function ConfirmDialog({ opened, title, children, confirmLabel, onConfirm, onClose }: Props) {
  const run = useMutation({ mutationFn: onConfirm });
  function close() {
    run.reset();
    onClose();
  }
  return (
    <Modal opened={opened} onClose={close} title={title}>
      <Stack>
        {children}
        {run.isError && (
          <Alert color="red" role="alert" data-testid="confirm-error">
            {problemText(run.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red" loading={run.isPending} onClick={() => run.mutate()}>
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
