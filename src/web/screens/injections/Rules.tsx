import { Alert, Anchor, Button, Group, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { RuleForm, type Rule } from './RuleForm';

const EVERY_DAY = 7;

/** "10:00 Europe/Berlin, every day" / "… on mon, fri". */
const scheduleText = (s: Rule['schedule']) =>
  `${s.at} ${s.time_zone}, ${s.days.length === EVERY_DAY ? 'every day' : `on ${s.days.join(', ')}`}`;

function RuleRow({ rule, onEdit, onChanged }: { rule: Rule; onEdit: () => void; onChanged: () => void }) {
  const clock = useClock();
  const [deleting, setDeleting] = useState(false);
  const toggle = useMutation({
    mutationFn: async (enabled: boolean) =>
      must(await api.PATCH('/api/injection-rules/{id}', { params: { path: { id: rule.id } }, body: { enabled } })),
    onSettled: onChanged,
  });
  const last = rule.last_run;
  return (
    <Table.Tr data-testid="rule-row" id={`rule-${rule.id}`}>
      <Table.Td>
        <Text fw={500} size="sm">
          {rule.name}
        </Text>
        <Text size="xs" c="dimmed">
          {scheduleText(rule.schedule)}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm">
          Last {rule.filter.last_days} days · {rule.per_minute}/min to{' '}
          {rule.flow_id ? 'a flow' : `${rule.partner_ids?.length ?? 0} partner(s)`}
        </Text>
        <Text size="xs" c="dimmed">
          Next: {rule.next_run_at ? clock.dateTime(rule.next_run_at) : '—'}
        </Text>
      </Table.Td>
      <Table.Td data-testid="rule-last-run">
        {!last ? (
          <Text size="sm">Never</Text>
        ) : last.injection_id ? (
          <Anchor size="sm" href={`#injection-${last.injection_id}`}>
            {clock.dateTime(last.at)}
          </Anchor>
        ) : (
          <Text size="sm" c="orange">
            Skipped: {last.skipped}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Switch
          aria-label={`${rule.name} enabled`}
          checked={rule.enabled}
          disabled={toggle.isPending}
          onChange={(e) => toggle.mutate(e.currentTarget.checked)}
        />
      </Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Button size="compact-sm" variant="default" onClick={onEdit}>
            Edit
          </Button>
          <Button size="compact-sm" variant="subtle" color="red" onClick={() => setDeleting(true)}>
            Delete
          </Button>
        </Group>
        {toggle.isError && (
          <Text c="red" size="sm" role="alert">
            {problemText(toggle.error)}
          </Text>
        )}
        <ConfirmDialog
          opened={deleting}
          title={`Delete rule “${rule.name}”?`}
          confirmLabel="Delete"
          onConfirm={async () => {
            must(await api.DELETE('/api/injection-rules/{id}', { params: { path: { id: rule.id } } }));
            onChanged();
          }}
          onClose={() => setDeleting(false)}
        >
          <Text size="sm">It will not run again; the jobs it made stay.</Text>
        </ConfirmDialog>
      </Table.Td>
    </Table.Tr>
  );
}

/** Recurring re-injection rules: each run makes a job (listed below with the jobs). */
export function Rules() {
  const [editing, setEditing] = useState<Rule | 'new' | null>(null);
  const rules = useQuery({
    queryKey: ['injection-rules'],
    queryFn: async () => must(await api.GET('/api/injection-rules', { params: { query: { limit: 100 } } })),
    refetchInterval: 10_000,
  });
  const changed = () => void rules.refetch();
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2} size="h3">
          Rules
        </Title>
        <Button size="compact-md" onClick={() => setEditing('new')}>
          New rule
        </Button>
      </Group>
      <Text c="dimmed" size="sm">
        A rule re-injects, on a schedule, the leads its filters select in the days before each run.
      </Text>
      {rules.isError && (
        <Alert color="red" role="alert">
          {problemText(rules.error)}
        </Alert>
      )}
      {rules.isPending ? (
        <Loading />
      ) : !rules.data?.data.length ? (
        <Text data-testid="rules-empty">No rules yet.</Text>
      ) : (
        <TableBox minWidth={760}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Rule</Table.Th>
                <Table.Th visibleFrom="sm">What</Table.Th>
                <Table.Th>Last run</Table.Th>
                <Table.Th>On</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rules.data.data.map((rule) => (
                <RuleRow key={rule.id} rule={rule} onEdit={() => setEditing(rule)} onChanged={changed} />
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {editing && (
        <RuleForm
          rule={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            changed();
          }}
        />
      )}
    </Stack>
  );
}
