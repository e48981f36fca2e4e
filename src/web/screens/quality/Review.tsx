import {
  Alert,
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { FLAG_INFO } from '../../ui/flags';
import { usePagedList } from '../../ui/ListPage';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { useWhoami } from '../../whoami';
import { LeadDrawer } from '../leads/LeadDrawer';
import { ReviewAlertSetting } from './ReviewAlertSetting';

type Queue = paths['/api/leads/review']['get']['responses'][200]['content']['application/json'];
type Outcome = paths['/api/leads/review/approve']['post']['responses'][200]['content']['application/json'];

const QUEUE_KEY = ['review-queue'];
const HELD_KEY = 'review-held';
const PAGE = 100;

/**
 * /quality/review: the leads a traffic provider's or a flow's review rule held instead of routing
 * (status held; their providers were answered pending). Operators with leads:edit approve them
 * (routed as if they arrived now) or reject them with a reason the provider is told. The
 * provider filter lives in the URL (a notification's link opens it).
 */
export default function Review() {
  const whoami = useWhoami();
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  if (!whoami.data) return <Loading />;
  return <ReviewScreen permissions={whoami.data.permissions} />;
}

function ReviewScreen({ permissions }: { permissions: string[] }) {
  const canDecide = permissions.includes('leads:edit');
  const clock = useClock();
  const queryClient = useQueryClient();
  const [params, setParams] = useSearchParams();
  const provider = params.get('traffic_provider_id') ?? '';
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [rejecting, setRejecting] = useState(false);
  const [outcome, setOutcome] = useState<{ verb: string; result: Outcome } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState<string | null>(null);

  const queue = useQuery({ queryKey: QUEUE_KEY, queryFn: async () => must(await api.GET('/api/leads/review')) });
  const held = usePagedList([HELD_KEY, provider], async (cursor) =>
    must(
      await api.GET('/api/leads/search', {
        params: {
          query: {
            date_type: 'registration',
            order: 'asc',
            status: ['held'],
            limit: PAGE,
            cursor,
            ...(provider ? { traffic_provider_id: provider } : {}),
          },
        },
      }),
    ),
  );
  const rows = held.data?.pages.flatMap((p) => p.data) ?? [];

  function showProvider(id: string) {
    const next = new URLSearchParams(params);
    if (id) next.set('traffic_provider_id', id);
    else next.delete('traffic_provider_id');
    setParams(next, { replace: true });
    setSelected(new Set());
  }

  function toggle(id: string, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  }

  async function decide(verb: 'approve' | 'reject', reason?: string) {
    setBusy(true);
    setFailure(null);
    const lead_ids = [...selected];
    const res =
      verb === 'approve'
        ? await api.POST('/api/leads/review/approve', { body: { lead_ids } })
        : await api.POST('/api/leads/review/reject', { body: { lead_ids, reason: reason ?? '' } });
    setBusy(false);
    if (res.error || !res.data) {
      setFailure(problemText(res.error));
      return false;
    }
    setOutcome({ verb: verb === 'approve' ? 'Approved' : 'Rejected', result: res.data });
    setSelected(new Set());
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: QUEUE_KEY }),
      queryClient.invalidateQueries({ queryKey: [HELD_KEY] }),
    ]);
    return true;
  }

  const allOnPage = rows.length > 0 && rows.every((r) => selected.has(r.id));
  return (
    <Stack>
      <Title order={1} size="h2">
        Review queue
      </Title>
      <Text size="sm" c="dimmed">
        A traffic provider or a flow whose review rule holds flagged or low-scoring leads sends them here instead of
        routing them; their provider is answered “pending”. Approve to route a lead as if it arrived now, or reject it
        with a reason its provider is told. Set the rules in each traffic provider’s and flow’s editor.
      </Text>
      {queue.isError && <ErrorAlert error={queue.error} />}
      {queue.data && <QueueSummary queue={queue.data} provider={provider} onProvider={showProvider} />}
      {permissions.includes('quality:view') && queue.data && (
        <ReviewAlertSetting minutes={queue.data.alert_after_minutes} canEdit={permissions.includes('quality:edit')} />
      )}
      {outcome && (
        <Alert color="green" withCloseButton closeButtonLabel="Dismiss" onClose={() => setOutcome(null)}>
          <span data-testid="review-outcome">
            {outcome.verb} {outcome.result.done.length} lead{outcome.result.done.length === 1 ? '' : 's'}.
          </span>
          {outcome.result.skipped.map((s) => (
            <Text key={s.id} size="sm">
              {s.id}: {s.reason}
            </Text>
          ))}
        </Alert>
      )}
      {failure && (
        <Alert color="red" withCloseButton closeButtonLabel="Dismiss" onClose={() => setFailure(null)}>
          {failure}
        </Alert>
      )}
      {canDecide && rows.length > 0 && (
        <Group gap="xs">
          <Button disabled={!selected.size} loading={busy} onClick={() => decide('approve')}>
            Approve {selected.size || ''}
          </Button>
          <Button color="red" variant="light" disabled={!selected.size || busy} onClick={() => setRejecting(true)}>
            Reject {selected.size || ''}…
          </Button>
        </Group>
      )}
      {held.isError && <ErrorAlert error={held.error} />}
      {held.isPending ? (
        <Loading />
      ) : rows.length === 0 && !held.isError ? (
        <Text data-testid="review-empty">No leads are waiting for review{provider ? ' from this provider' : ''}.</Text>
      ) : (
        <>
          <ZoneNote />
          <TableBox minWidth={900}>
            <Table striped highlightOnHover data-testid="review-table">
              <Table.Thead>
                <Table.Tr>
                  {canDecide && (
                    <Table.Th>
                      <Checkbox
                        aria-label="Select every lead shown"
                        checked={allOnPage}
                        onChange={(e) => setSelected(new Set(e.currentTarget.checked ? rows.map((r) => r.id) : []))}
                      />
                    </Table.Th>
                  )}
                  <Table.Th>Received</Table.Th>
                  <Table.Th>Provider</Table.Th>
                  <Table.Th visibleFrom="sm">Country</Table.Th>
                  <Table.Th visibleFrom="sm">Email</Table.Th>
                  <Table.Th>Score</Table.Th>
                  <Table.Th visibleFrom="sm">Why held</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((r) => (
                  <Table.Tr key={r.id}>
                    {canDecide && (
                      <Table.Td>
                        <Checkbox
                          aria-label={`Select lead ${r.id}`}
                          checked={selected.has(r.id)}
                          onChange={(e) => toggle(r.id, e.currentTarget.checked)}
                        />
                      </Table.Td>
                    )}
                    <Table.Td>
                      <Anchor component="button" type="button" size="sm" onClick={() => setOpen(r.id)}>
                        {clock.dateTime(r.created_at)}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{r.traffic_provider_name ?? r.traffic_provider_id}</Table.Td>
                    <Table.Td visibleFrom="sm">{r.country}</Table.Td>
                    <Table.Td visibleFrom="sm">{r.email}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        <Text size="sm">{r.quality_score ?? '—'}</Text>
                        {r.flags.map((f) => (
                          <Badge key={f} size="xs" color="orange" variant="light" title={FLAG_INFO[f].description}>
                            {FLAG_INFO[f].label}
                          </Badge>
                        ))}
                      </Group>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <Text size="sm">{r.reason?.replace(/^held for review: /, '')}</Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </TableBox>
        </>
      )}
      {held.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => held.fetchNextPage()} loading={held.isFetchingNextPage}>
            Load more
          </Button>
        </Group>
      )}
      <LeadDrawer leadId={open} onClose={() => setOpen(null)} />
      {rejecting && (
        <RejectModal
          count={selected.size}
          onClose={() => setRejecting(false)}
          onReject={async (reason) => {
            if (await decide('reject', reason)) setRejecting(false);
          }}
          busy={busy}
        />
      )}
    </Stack>
  );
}

function QueueSummary({
  queue,
  provider,
  onProvider,
}: {
  queue: Queue;
  provider: string;
  onProvider: (id: string) => void;
}) {
  const clock = useClock();
  return (
    <Stack gap="xs" data-testid="review-summary">
      <Text>
        {queue.held === 0
          ? 'No lead is held for review.'
          : `${queue.held} lead${queue.held === 1 ? '' : 's'} held, the oldest since ${clock.dateTime(queue.oldest_held_at)}.`}
      </Text>
      {queue.providers.length > 0 && (
        <Group gap="xs">
          <Button size="xs" variant={provider ? 'default' : 'filled'} onClick={() => onProvider('')}>
            Every provider
          </Button>
          {queue.providers.map((p) => (
            <Button
              key={p.traffic_provider_id}
              size="xs"
              variant={provider === p.traffic_provider_id ? 'filled' : 'default'}
              onClick={() => onProvider(p.traffic_provider_id)}
            >
              {p.traffic_provider_name} ({p.held})
            </Button>
          ))}
        </Group>
      )}
    </Stack>
  );
}

function RejectModal({
  count,
  busy,
  onClose,
  onReject,
}: {
  count: number;
  busy: boolean;
  onClose: () => void;
  onReject: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  return (
    <Modal opened onClose={onClose} title={`Reject ${count} lead${count === 1 ? '' : 's'}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onReject(reason);
        }}
      >
        <Stack>
          <TextInput
            label="Reason"
            description="The traffic provider is told this as you write it (its intake answer, its portal and log)."
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            maxLength={200}
            required
            data-autofocus
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color="red" loading={busy} disabled={!reason.trim()}>
              Reject
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
