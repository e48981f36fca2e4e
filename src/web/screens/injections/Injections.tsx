import { Alert, Anchor, Badge, Button, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { saveAnswer } from '../../ui/download';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { Rules } from './Rules';

type Job = paths['/api/injections/{id}']['get']['responses'][200]['content']['application/json'];
type Step = 'pause' | 'resume' | 'cancel';

const STATE_COLORS: Record<Job['state'], string> = {
  scheduled: 'blue',
  running: 'green',
  paused: 'yellow',
  cancelled: 'gray',
  done: 'teal',
};

/** What a job may do next, as its buttons. */
const STEPS: Record<Job['state'], Step[]> = {
  scheduled: ['pause', 'cancel'],
  running: ['pause', 'cancel'],
  paused: ['resume', 'cancel'],
  cancelled: [],
  done: [],
};

const LABELS: Record<Step, string> = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel' };

function JobRow({ job, onChanged }: { job: Job; onChanged: () => void }) {
  const clock = useClock();
  const steer = useMutation({
    mutationFn: async (step: Step) =>
      must(await api.POST(`/api/injections/{id}/${step}`, { params: { path: { id: job.id } } })),
    onSettled: onChanged,
  });
  const report = useMutation({
    mutationFn: async () =>
      saveAnswer(
        await api.GET('/api/injections/{id}/report.csv', { params: { path: { id: job.id } }, parseAs: 'blob' }),
        `injection-${job.id}.csv`,
      ),
  });
  const done = job.sent + job.skipped;
  const target = job.flow_id ? 'flow' : `${job.partner_ids?.length ?? 0} partner(s)`;
  return (
    <Table.Tr data-testid="injection-row" id={`injection-${job.id}`}>
      <Table.Td visibleFrom="sm">{clock.dateTime(job.created_at)}</Table.Td>
      <Table.Td>
        <Badge color={STATE_COLORS[job.state]} data-testid="injection-state">
          {job.state}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Progress value={job.total ? (100 * done) / job.total : 100} aria-label="Progress" />
        <Text size="sm" data-testid="injection-progress">
          {done} of {job.total}
        </Text>
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <Text size="sm">
          {job.delivered} delivered · {job.refused} refused · {job.skipped} skipped · {job.left} left
        </Text>
        <Text size="xs" c="dimmed">
          {job.per_minute}/min to a {target}
          {job.rule_id && (
            <>
              {' · '}
              <Anchor href={`#rule-${job.rule_id}`} inherit>
                made by a rule
              </Anchor>
            </>
          )}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap="xs">
          {STEPS[job.state].map((step) => (
            <Button
              key={step}
              size="compact-sm"
              variant="default"
              onClick={() => steer.mutate(step)}
              loading={steer.isPending && steer.variables === step}
            >
              {LABELS[step]}
            </Button>
          ))}
          <Button size="compact-sm" variant="subtle" onClick={() => report.mutate()} loading={report.isPending}>
            Report
          </Button>
        </Group>
        {(steer.isError || report.isError) && (
          <Text c="red" size="sm" role="alert">
            {problemText(steer.error ?? report.error)}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

/** Re-injection jobs (Leads → Re-inject): their progress, refreshed every few seconds, and their controls. */
export default function Injections() {
  const jobs = useQuery({
    queryKey: ['injections'],
    queryFn: async () => must(await api.GET('/api/injections', { params: { query: { limit: 100 } } })),
    refetchInterval: 2000,
  });
  return (
    <Stack gap="sm">
      <Title order={1} size="h2">
        Re-injection jobs
      </Title>
      <ZoneNote />
      <Rules />
      <Title order={2} size="h3">
        Jobs
      </Title>
      <Text c="dimmed" size="sm">
        Start a job from the Leads screen: filter the leads, then Re-inject.
      </Text>
      {jobs.isError && (
        <Alert color="red" role="alert">
          {problemText(jobs.error)}
        </Alert>
      )}
      {jobs.isPending ? (
        <Loading />
      ) : !jobs.data?.data.length ? (
        <Text data-testid="injections-empty">No re-injection jobs yet.</Text>
      ) : (
        <TableBox minWidth={760}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th visibleFrom="sm">Created</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Progress</Table.Th>
                <Table.Th visibleFrom="sm">Outcomes</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {jobs.data.data.map((job) => (
                <JobRow key={job.id} job={job} onChanged={() => void jobs.refetch()} />
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
    </Stack>
  );
}
