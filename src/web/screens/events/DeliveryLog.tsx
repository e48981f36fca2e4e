import { Badge, Button, Code, Group, Stack, Table, Text } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useClock } from '../../ui/useClock';
import { TableBox } from '../../ui/TableBox';

type Delivery =
  paths['/api/webhooks/{id}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];
type Detail =
  paths['/api/webhooks/{id}/deliveries/{deliveryId}']['get']['responses'][200]['content']['application/json'];

const STATE_COLOR: Record<Delivery['state'], string> = {
  pending: 'yellow',
  delivered: 'green',
  failed: 'red',
  cancelled: 'gray',
};

/**
 * A destination's delivery log (a webhook's, a provider's postbacks'): newest first, each with
 * its last answer; "Tries" opens every try's answer; Retry sends one again (with `canRetry`).
 */
export function DeliveryLog({
  queryKey,
  load,
  loadOne,
  retry,
  canRetry,
  testId,
}: {
  queryKey: unknown[];
  load: () => Promise<{ data: Delivery[] }>;
  loadOne: (id: string) => Promise<Detail>;
  retry: (id: string) => Promise<{ error?: unknown }>;
  canRetry: boolean;
  testId: string;
}) {
  const { dateTime: time, zone } = useClock();
  const queryClient = useQueryClient();
  const log = useQuery({ queryKey, queryFn: load, refetchInterval: 5000 });
  const [open, setOpen] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const detail = useQuery({ queryKey: [...queryKey, open], queryFn: () => loadOne(open!), enabled: open !== null });

  async function again(id: string) {
    setProblem(null);
    const r = await retry(id);
    if (r.error) setProblem(problemText(r.error));
    await queryClient.invalidateQueries({ queryKey });
  }

  if (log.isPending) return <Loading />;
  if (log.isError) return <ErrorAlert error={log.error} />;
  if (log.data.data.length === 0) {
    return (
      <Text size="sm" c="dimmed" data-testid={`${testId}-empty`}>
        Nothing sent yet.
      </Text>
    );
  }
  return (
    <Stack gap="xs">
      {problem && (
        <Text c="red.8" size="sm" role="alert">
          {problem}
        </Text>
      )}
      <TableBox minWidth={700}>
        <Table striped data-testid={testId}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Event</Table.Th>
              <Table.Th visibleFrom="sm">When ({zone})</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th visibleFrom="sm">Tries</Table.Th>
              <Table.Th visibleFrom="sm">Last answer</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {log.data.data.map((d) => (
              <Table.Tr key={d.id} data-testid={`${testId}-row`}>
                <Table.Td>
                  <Code>{d.event_type}</Code>
                </Table.Td>
                <Table.Td visibleFrom="sm">{time(d.occurred_at)}</Table.Td>
                <Table.Td>
                  <Badge color={STATE_COLOR[d.state]} data-testid="delivery-state">
                    {d.state}
                  </Badge>
                  {d.next_attempt_at && (
                    <Text size="xs" c="dimmed">
                      next {time(d.next_attempt_at)}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td visibleFrom="sm">{d.attempts}</Table.Td>
                <Table.Td visibleFrom="sm">
                  <Text size="sm">{d.last_status ? `HTTP ${d.last_status}` : d.attempts ? 'no answer' : '—'}</Text>
                  {d.last_error && (
                    <Text size="xs" c="red.8">
                      {d.last_error}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Button size="compact-xs" variant="subtle" onClick={() => setOpen(open === d.id ? null : d.id)}>
                      {open === d.id ? 'Hide' : 'Details'}
                    </Button>
                    {canRetry && (
                      <Button
                        size="compact-xs"
                        variant="light"
                        onClick={() => void again(d.id)}
                        data-testid="delivery-retry"
                      >
                        Retry
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </TableBox>
      {open &&
        (detail.isPending ? (
          <Loading />
        ) : detail.isError ? (
          <ErrorAlert error={detail.error} />
        ) : (
          <Tries detail={detail.data} />
        ))}
    </Stack>
  );
}

function Tries({ detail }: { detail: Detail }) {
  const { dateTime: time } = useClock();
  return (
    <Stack gap={4} data-testid="delivery-detail">
      <Text size="sm" fw={500}>
        Sent
      </Text>
      <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
        {detail.payload}
      </Code>
      {detail.tries.map((t, i) => (
        <Text size="sm" key={i} data-testid="delivery-try">
          {time(t.attempted_at)} · {t.duration_ms} ms · {t.http_status ? `HTTP ${t.http_status}` : 'no answer'}{' '}
          {t.ok ? '✓' : `✗ ${t.error ?? ''}`}
          {t.response_excerpt && (
            <Text span size="xs" c="dimmed" ff="monospace">
              {' '}
              {t.response_excerpt.slice(0, 300)}
            </Text>
          )}
        </Text>
      ))}
    </Stack>
  );
}
