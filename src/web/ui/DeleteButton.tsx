import { Button, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { must } from '../api/client';
import { ConfirmDialog } from './ConfirmDialog';

interface Props {
  /** "flow", "partner"…: used in the wording. */
  what: string;
  name: string;
  /** The DELETE call; its error (e.g. 409 naming what still uses the item) is shown in the dialog. */
  remove: () => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  /** The list to go back to, whose queries are refreshed. */
  list: { to: string; queryKey: string };
  disabled?: boolean;
  /** Why it is disabled, as a tooltip. */
  title?: string;
  /** Called once deleted, before leaving: the editor drops its unsaved-changes guard. */
  onDeleted: () => void;
  /** What deleting means; by default, that items leads refer to are archived instead. */
  note?: ReactNode;
}

/**
 * Delete with confirmation, then back to the list. For flows, partners, campaigns and providers the
 * API archives instead of deleting when leads still refer to one, and the default note says so.
 */
export function DeleteButton({ what, name, remove, list, disabled, title, onDeleted, note }: Props) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);

  async function confirm() {
    must(await remove());
    onDeleted();
    await queryClient.invalidateQueries({ queryKey: [list.queryKey] });
    navigate(list.to, { replace: true });
  }

  return (
    <>
      <Button color="red" variant="light" onClick={() => setOpen(true)} disabled={disabled} title={title}>
        Delete
      </Button>
      <ConfirmDialog
        opened={open}
        title={`Delete ${what} “${name}”?`}
        confirmLabel="Delete"
        onConfirm={confirm}
        onClose={() => setOpen(false)}
      >
        <Text size="sm">
          {note ??
            `If leads refer to this ${what}, it is archived instead: it leaves the list and can no longer be changed, but stays readable and in reports.`}
        </Text>
      </ConfirmDialog>
    </>
  );
}
