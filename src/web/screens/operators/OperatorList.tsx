import { Badge, Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { api, must } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';

type Status = 'active' | 'disabled';
const date = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export default function OperatorList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const [text, setText] = useState('');
  const [q] = useDebouncedValue(text.trim(), 300);
  const [status, setStatus] = useState<Status | null>(null);
  const operators = useInfiniteQuery({
    queryKey: ['operators', { q, status }],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      must(await api.GET('/api/operators', { params: { query: { limit: 100, cursor: pageParam, q: q || undefined, status: status ?? undefined } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    // Typing in the search box keeps the table in place instead of flashing a spinner.
    placeholderData: keepPreviousData,
  });
  const canEdit = whoami.data?.permissions.includes('operators:edit') ?? false;
  const rows = operators.data?.pages.flatMap((p) => p.data) ?? [];
  const filtered = Boolean(q || status);

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Operators</Title>
        <Button onClick={() => navigate('/settings/operators/new')} disabled={!canEdit}>
          New operator
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        The people who sign in to this dashboard. What each may see and do comes from their role.
      </Text>
      <Group>
        <TextInput placeholder="Search name or email" aria-label="Search operators" value={text} onChange={(e) => setText(e.currentTarget.value)} w={280} />
        <Select
          aria-label="Status"
          placeholder="Any status"
          clearable
          data={[
            { value: 'active', label: 'Active' },
            { value: 'disabled', label: 'Disabled' },
          ]}
          value={status}
          onChange={(v) => setStatus(v as Status | null)}
          w={160}
        />
      </Group>
      {operators.isError && <ErrorAlert error={operators.error} />}
      {operators.isPending ? (
        <Loading />
      ) : rows.length === 0 && !operators.isError ? (
        <Text data-testid="operators-empty">{filtered ? 'No operator matches these filters.' : 'There are no operators yet.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover data-testid="operators-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Email', 'Role', 'Status', '2FA', 'Time zone', 'Added'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((o) => (
                <Table.Tr key={o.id} data-testid="operator-row">
                  <Table.Td>
                    <Text component={Link} to={`/settings/operators/${o.id}`} fw={500} c="blue">
                      {o.name}
                    </Text>
                    {o.id === whoami.data?.operator.id && (
                      <Text span size="xs" c="dimmed" ml={6}>
                        (you)
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{o.email}</Table.Td>
                  <Table.Td>{o.role_name}</Table.Td>
                  <Table.Td>
                    <Badge color={o.status === 'active' ? 'green' : 'gray'}>{o.status}</Badge>
                  </Table.Td>
                  <Table.Td>{o.two_factor ? 'on' : 'off'}</Table.Td>
                  <Table.Td>{o.timezone}</Table.Td>
                  <Table.Td>{date.format(new Date(o.created_at))}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {operators.hasNextPage && (
        <Button variant="default" onClick={() => operators.fetchNextPage()} loading={operators.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
