import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../../api/client';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { useClock } from '../../ui/useClock';
import { EditEntryModal } from './EditEntryModal';
import { kindLabel, LIST_KEY, scopeText, type Entry } from './entries';

/** The table's headers; those in WIDE_ONLY are hidden on a phone (their cells are `visibleFrom="sm"`). */
export const HEADERS = ['Value', 'Kind', 'Scope', 'Expires', 'Note', 'Added'];
export const WIDE_ONLY = ['Scope', 'Expires', 'Note', 'Added'];

/** One entry: an expired one is marked (and dimmed), and says so on a phone too; Edit and Delete with quality:edit. */
export function EntryRow({ entry: e, canEdit }: { entry: Entry; canEdit: boolean }) {
  const clock = useClock();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const dim = e.active ? undefined : 'dimmed';
  return (
    <Table.Tr data-testid="blocklist-row" data-active={e.active}>
      <Table.Td miw={{ base: 0, sm: 220 }}>
        <Group gap={6} wrap="wrap">
          <Text size="sm" ff="monospace" c={dim} style={{ overflowWrap: 'anywhere' }} data-testid="blocklist-value">
            {e.value}
          </Text>
          {!e.active && (
            <Badge size="sm" color="gray" variant="light" data-testid="blocklist-expired">
              expired
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td>
        <Text size="sm" c={dim}>
          {kindLabel(e.kind)}
        </Text>
        {/* The Scope column is hidden on a phone: said here instead. */}
        <Text size="xs" c="dimmed" hiddenFrom="sm">
          {scopeText(e)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm" c={dim} fw={e.traffic_provider_id ? undefined : 500}>
          {scopeText(e)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm" c={dim}>
          {e.expires_at ? clock.dateTime(e.expires_at) : 'Never'}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm" c={dim} lineClamp={3} title={e.note ?? undefined}>
          {e.note ?? '—'}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Stack gap={0}>
          <Text size="sm">{e.created_by_name ?? (e.created_by ? e.created_by : 'Leadgate')}</Text>
          <Text size="xs" c="dimmed">
            {clock.dateTime(e.created_at)}
          </Text>
        </Stack>
      </Table.Td>
      {canEdit && (
        <Table.Td>
          <Group gap="xs" wrap="nowrap">
            <Button size="compact-sm" variant="default" onClick={() => setEditing(true)} aria-label={`Edit ${e.value}`}>
              Edit
            </Button>
            <Button
              size="compact-sm"
              variant="subtle"
              color="red"
              onClick={() => setDeleting(true)}
              aria-label={`Delete ${e.value}`}
            >
              Delete
            </Button>
          </Group>
          <ConfirmDialog
            opened={deleting}
            title={`Delete “${e.value}” from the blocklist?`}
            confirmLabel="Delete"
            onConfirm={async () => {
              must(await api.DELETE('/api/blocklists/{id}', { params: { path: { id: e.id } } }));
              await queryClient.invalidateQueries({ queryKey: [LIST_KEY] });
              setDeleting(false);
            }}
            onClose={() => setDeleting(false)}
          >
            <Text size="sm">
              {`New leads are no longer refused by this entry (${kindLabel(e.kind)}, ${scopeText(e)}). Leads it refused stay rejected.`}
            </Text>
          </ConfirmDialog>
          {editing && <EditEntryModal entry={e} onClose={() => setEditing(false)} />}
        </Table.Td>
      )}
    </Table.Tr>
  );
}
