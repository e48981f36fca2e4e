import { Alert, Button, Group, Modal, Paper, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { problemText } from '../../api/client';
import { useWhoami } from '../../whoami';
import { downloadLeads } from './exportCsv';
import type { Lead } from './filters';
import { RedeliverModal } from './RedeliverModal';

/** How many leads one export of a selection takes (the API's id filter). */
export const MAX_SELECTED_EXPORT = 200;

const REDELIVERABLE = new Set(['rejected', 'failed']);

interface Props {
  selected: ReadonlyMap<string, Lead>;
  onClear: () => void;
  /** After a redelivery: the table shows the leads' new states. */
  onChanged: () => void;
}

/** What can be done to the selected leads: export them, redeliver the rejected and failed ones. */
export function LeadsBulk({ selected, onClear, onChanged }: Props) {
  const whoami = useWhoami();
  const canEdit = !!whoami.data?.permissions.includes('leads:edit');
  const [confirmExport, setConfirmExport] = useState(false);
  const [redeliver, setRedeliver] = useState<{ id: string; name: string; country: string }[] | null>(null);
  const leads = [...selected.values()];
  const n = leads.length;
  const redeliverable = leads
    .filter((l) => REDELIVERABLE.has(l.status))
    .map((l) => ({ id: l.id, name: `${l.first_name} ${l.last_name}`, country: l.country }));
  const tooMany = n > MAX_SELECTED_EXPORT;
  const exportRun = useMutation({
    mutationFn: () => downloadLeads({ id: leads.map((l) => l.id) }),
    onSuccess: () => setConfirmExport(false),
  });

  if (n === 0 && redeliver === null) return null;
  return (
    <>
      {n > 0 && (
        <Paper withBorder p="xs" role="region" aria-label="Selected leads" data-testid="bulk-bar">
          <Group justify="space-between" gap="xs">
            <Text size="sm" fw={600} data-testid="bulk-count">
              {n === 1 ? '1 lead selected' : `${n.toLocaleString()} leads selected`}
            </Text>
            <Group gap="xs">
              <Button
                size="xs"
                variant="default"
                disabled={tooMany}
                title={
                  tooMany
                    ? `One export takes at most ${MAX_SELECTED_EXPORT} selected leads; to export more, filter and use Export CSV`
                    : undefined
                }
                onClick={() => setConfirmExport(true)}
                data-testid="bulk-export"
              >
                Export selected
              </Button>
              {canEdit && (
                <Button
                  size="xs"
                  variant="default"
                  disabled={redeliverable.length === 0}
                  title={redeliverable.length === 0 ? 'Only rejected or failed leads can be redelivered' : undefined}
                  onClick={() => setRedeliver(redeliverable)}
                  data-testid="bulk-redeliver"
                >
                  Redeliver{redeliverable.length ? ` (${redeliverable.length})` : ''}
                </Button>
              )}
              <Button size="xs" variant="subtle" onClick={onClear}>
                Clear selection
              </Button>
            </Group>
          </Group>
          {tooMany && (
            <Text size="xs" c="dimmed" mt={4}>
              Export selected takes at most {MAX_SELECTED_EXPORT} leads; to export more, filter the table and use Export
              CSV.
            </Text>
          )}
        </Paper>
      )}
      <Modal
        opened={confirmExport}
        onClose={() => (exportRun.reset(), setConfirmExport(false))}
        title={`Export ${n === 1 ? '1 lead' : `${n} leads`}`}
      >
        <Stack>
          <Text size="sm">
            The selected leads as one CSV file, with the columns of Export CSV
            {whoami.data?.permissions.includes('leads:contacts') ? '' : ' (email and phone masked, as you see them)'}.
            The export is recorded in the audit log.
          </Text>
          {exportRun.isError && (
            <Alert color="red" role="alert">
              {problemText(exportRun.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => (exportRun.reset(), setConfirmExport(false))}>
              Cancel
            </Button>
            <Button loading={exportRun.isPending} onClick={() => exportRun.mutate()} data-testid="bulk-export-confirm">
              Export
            </Button>
          </Group>
        </Stack>
      </Modal>
      <RedeliverModal
        leads={redeliver ?? []}
        skipped={redeliver === null ? 0 : n - redeliver.length}
        opened={redeliver !== null}
        onClose={() => setRedeliver(null)}
        onDone={onChanged}
      />
    </>
  );
}
