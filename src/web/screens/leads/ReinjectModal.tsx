import { Alert, Button, Group, Modal, NumberInput, Select, Stack, Switch, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { FilterQuery } from './filters';

interface Props {
  /** The Leads filters the job's leads are chosen by (as the table shows them). */
  filters: FilterQuery;
  opened: boolean;
  onClose: () => void;
}

/**
 * "Re-inject": a job that sends the leads the current filters select through a flow, at a pace
 * (POST /api/injections). The preview says how many leads it would hold before it is made.
 */
export function ReinjectModal({ filters, opened, onClose }: Props) {
  const navigate = useNavigate();
  const [flowId, setFlowId] = useState<string | null>(null);
  const [perMinute, setPerMinute] = useState<number | string>(60);
  const [reoffer, setReoffer] = useState(false);
  const { total: _total, ...rest } = filters as FilterQuery & { total?: boolean };
  const filter = { ...rest, date_type: rest.date_type ?? 'registration', order: rest.order ?? 'desc' };
  const preview = useQuery({
    queryKey: ['injection-preview', JSON.stringify(filter)],
    enabled: opened,
    queryFn: async () => must(await api.POST('/api/injections/preview', { body: { filter } })),
  });
  const flows = useQuery({
    queryKey: ['options', '/api/flows'],
    enabled: opened,
    queryFn: async () => must(await api.GET('/api/flows', { params: { query: { limit: 500 } } })),
  });
  const create = useMutation({
    mutationFn: async () =>
      must(
        await api.POST('/api/injections', {
          body: { filter, flow_id: flowId!, per_minute: Number(perMinute), reoffer },
        }),
        { flow_id: 'Flow', per_minute: 'Leads per minute' },
      ),
    onSuccess: () => navigate('/leads/injections'),
  });
  const count = preview.data?.count;
  return (
    <Modal opened={opened} onClose={onClose} title="Re-inject these leads" size="lg">
      <Stack>
        <Text data-testid="reinject-count" aria-live="polite">
          {preview.isError
            ? problemText(preview.error)
            : count === undefined
              ? 'Counting the leads these filters select…'
              : `${count.toLocaleString()} ${count === 1 ? 'lead' : 'leads'} match these filters.`}
        </Text>
        <Text size="sm" c="dimmed">
          Leads that are no longer rejected or failed when their turn comes are skipped.
        </Text>
        <Select
          label="Send through flow"
          placeholder="Choose a flow"
          data={(flows.data?.data ?? []).map((f) => ({ value: f.id, label: f.name }))}
          value={flowId}
          onChange={setFlowId}
          searchable
        />
        <NumberInput label="Leads per minute" min={1} max={10_000} value={perMinute} onChange={setPerMinute} />
        <Switch
          label="Also offer leads to partners that were offered them before"
          checked={reoffer}
          onChange={(e) => setReoffer(e.currentTarget.checked)}
        />
        {create.isError && (
          <Alert color="red" role="alert">
            {problemText(create.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => create.mutate()} loading={create.isPending} disabled={!flowId || !count}>
            Start job
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
