import { Anchor, Card, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router-dom';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';
import { HealthControls, HealthNumbers, usePartnerHealth } from '../partners/PartnerHealth';

/**
 * The morning check's first stop: the partners that need a look (failing, capped, paused), each
 * with today's calls, its cap fill and pause/resume; nothing without partners:view.
 */
export function PartnerHealthCard() {
  const whoami = useWhoami();
  if (!whoami.data?.permissions.includes('partners:view')) return null;
  return <HealthList />;
}

function HealthList() {
  const health = usePartnerHealth();
  const all = health.data?.data ?? [];
  const attention = all.filter((h) => h.health !== 'ok');
  return (
    <Card withBorder data-testid="partner-health-card">
      <Title order={2} size="h4" mb="xs">
        Partner health
      </Title>
      {health.isPending ? (
        <Loading />
      ) : health.isError ? (
        <ErrorAlert error={health.error} />
      ) : attention.length === 0 ? (
        <Text c="dimmed" data-testid="partner-health-fine">
          {all.length ? `All ${all.length} partners are active, answering and under their caps.` : 'No partners yet.'}
        </Text>
      ) : (
        <Stack gap="xs">
          {attention.map((h) => (
            <Paper key={h.id} withBorder p="xs" data-testid="partner-health-item" data-partner-id={h.id}>
              <Group justify="space-between" gap="xs">
                <Anchor component={Link} to={`/partners/${h.id}`} fw={500}>
                  {h.name}
                </Anchor>
                <HealthControls h={h} />
              </Group>
              <HealthNumbers h={h} />
            </Paper>
          ))}
        </Stack>
      )}
    </Card>
  );
}
