import { Alert, Button, Group, List, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, problemText } from '../../api/client';

interface Props {
  /** The leads to send again (rejected or failed ones; others are refused by the API, per lead). */
  leadIds: string[];
  opened: boolean;
  onClose: () => void;
  /** Called after a run, whatever each lead's outcome: the caller refreshes what it shows. */
  onDone: () => void;
}

interface Outcome {
  id: string;
  ok: boolean;
  text: string;
}

/** Confirm, then send each lead through its own flow again, and say what became of each. */
export function RedeliverModal({ leadIds, opened, onClose, onDone }: Props) {
  const run = useMutation({
    mutationFn: async (): Promise<Outcome[]> => {
      const out: Outcome[] = [];
      for (const id of leadIds) {
        const res = await api.POST('/api/leads/{id}/redeliver', { params: { path: { id } }, body: {} });
        out.push(res.error === undefined && res.data ? { id, ok: true, text: res.data.status } : { id, ok: false, text: problemText(res.error) });
      }
      return out;
    },
    onSettled: onDone,
  });
  function close() {
    run.reset();
    onClose();
  }
  const n = leadIds.length;
  return (
    <Modal opened={opened} onClose={close} title={n === 1 ? 'Redeliver lead' : `Redeliver ${n} leads`}>
      <Stack>
        <Text size="sm">
          {n === 1 ? 'The lead goes' : 'Each lead goes'} through its own flow again, as a new lead would. Only rejected or failed leads can be
          redelivered; every redelivery is recorded in the audit log.
        </Text>
        {run.isError && (
          <Alert color="red" role="alert">
            {problemText(run.error)}
          </Alert>
        )}
        {run.data && (
          <List size="sm" data-testid="redeliver-results">
            {run.data.map((o) => (
              <List.Item key={o.id} c={o.ok ? undefined : 'red.9'}>
                {o.id}: {o.text}
              </List.Item>
            ))}
          </List>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {run.data ? 'Close' : 'Cancel'}
          </Button>
          {!run.data && (
            <Button loading={run.isPending} onClick={() => run.mutate()} data-testid="redeliver-confirm">
              Redeliver
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
