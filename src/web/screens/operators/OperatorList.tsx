import { Badge, Group, Select, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { useClock } from '../../ui/useClock';
import { ListPage, usePagedList } from '../../ui/ListPage';

type Status = 'active' | 'disabled';

export default function OperatorList() {
  const whoami = useWhoami();
  const clock = useClock();
  const [text, setText] = useState('');
  const [q] = useDebouncedValue(text.trim(), 300);
  const [status, setStatus] = useState<Status | null>(null);
  const operators = usePagedList(
    ['operators', { q, status }],
    async (cursor) =>
      must(
        await api.GET('/api/operators', {
          params: { query: { limit: 100, cursor, q: q || undefined, status: status ?? undefined } },
        }),
      ),
    true, // typing in the search box keeps the table in place
  );
  const canEdit = whoami.data?.permissions.includes('operators:edit') ?? false;
  const filtered = Boolean(q || status);

  return (
    <ListPage
      title="Operators"
      create={{ label: 'New operator', to: '/settings/operators/new', allowed: canEdit }}
      intro="The people who sign in to this dashboard. What each may see and do comes from their role."
      filters={
        <Group>
          <TextInput
            placeholder="Search name or email"
            aria-label="Search operators"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            w={280}
          />
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
      }
      list={operators}
      empty={<>{filtered ? 'No operator matches these filters.' : 'There are no operators yet.'}</>}
      testId="operators"
      headers={['Name', 'Email', 'Role', 'Status', '2FA', 'Time zone', `Added (${clock.zone})`]}
      wideOnly={['Email', '2FA', 'Time zone', `Added (${clock.zone})`]}
      row={(o) => (
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
          <Table.Td visibleFrom="sm">{o.email}</Table.Td>
          <Table.Td>{o.role_name}</Table.Td>
          <Table.Td>
            <Badge color={o.status === 'active' ? 'green' : 'gray'}>{o.status}</Badge>
          </Table.Td>
          <Table.Td visibleFrom="sm">{o.two_factor ? 'on' : 'off'}</Table.Td>
          <Table.Td visibleFrom="sm">{o.timezone}</Table.Td>
          <Table.Td visibleFrom="sm">{clock.date(o.created_at)}</Table.Td>
        </Table.Tr>
      )}
    />
  );
}
