import { Alert, Card, Code, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useClock } from '../../ui/useClock';
import { useWhoami } from '../../whoami';
import { Backups } from './Backups';
import { formatBytes, formatDuration, HOSTING_KEY } from './shared';
import { PublicUrlForm } from './PublicUrlForm';

export type HostingStatus = paths['/api/hosting']['get']['responses'][200]['content']['application/json'];

/** /settings/hosting: what the server runs on, its public address, and SQLite backups. */
export default function Hosting() {
  // Uptime, memory and load move: refresh while the panel is open.
  const status = useQuery({
    queryKey: HOSTING_KEY,
    queryFn: async () => must(await api.GET('/api/hosting')),
    refetchInterval: 30_000,
  });
  const whoami = useWhoami();
  const canEdit = whoami.data?.permissions.includes('hosting:edit') ?? false;
  // Backups hold the whole database: the API refuses them to everyone but the admin role.
  const isAdmin = whoami.data?.admin ?? false;
  return (
    <Stack maw={1000}>
      <Title order={1} size="h2">
        Hosting
      </Title>
      {status.isPending ? (
        <Loading />
      ) : status.isError ? (
        <ErrorAlert error={status.error} />
      ) : (
        <>
          <Facts h={status.data} />
          <PublicUrlForm current={status.data.public_base_url} canEdit={canEdit} />
          {whoami.data && !canEdit && (
            <Alert color="yellow">You can view this panel but not change it (that needs hosting:edit).</Alert>
          )}
          {status.data.backups.supported ? (
            !whoami.data ? (
              <Loading />
            ) : isAdmin ? (
              <Backups advice={status.data.backups.advice} canEdit={canEdit} />
            ) : (
              <Card withBorder data-testid="backups-admins-only">
                <Title order={2} size="h4" mb="xs">
                  Backups
                </Title>
                <Alert color="gray">
                  Backups are for admins only: a backup holds the whole database (every lead, partner credentials and
                  two-factor secrets), so only an operator with the admin role can make, download or delete one.
                </Alert>
              </Card>
            )
          ) : (
            <Card withBorder data-testid="backup-advice">
              <Title order={2} size="h4" mb="xs">
                Backups
              </Title>
              <Text size="sm">{status.data.backups.advice}</Text>
            </Card>
          )}
        </>
      )}
    </Stack>
  );
}

function FactCard({ title, rows, testId }: { title: string; rows: [string, ReactNode][]; testId: string }) {
  return (
    <Card withBorder data-testid={testId}>
      <Title order={2} size="h4" mb="xs">
        {title}
      </Title>
      <Table>
        <Table.Tbody>
          {rows.map(([label, value]) => (
            <Table.Tr key={label}>
              <Table.Td c="dimmed" w="40%">
                {label}
              </Table.Td>
              <Table.Td>{value}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

const SECURITY = { tls: 'TLS (smtps)', starttls: 'STARTTLS (required)', none: 'none (plain text)' } as const;

function Facts({ h }: { h: HostingStatus }) {
  const clock = useClock();
  const db = h.database;
  const upToDate = db.migration_level === db.latest_migration;
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <FactCard
        title="Server"
        testId="hosting-server"
        rows={[
          ['Up for', formatDuration(h.uptime_seconds)],
          ['Started', `${clock.dateTime(h.started_at)} (${clock.zone})`],
          ['Node.js', h.node_version],
          ['Platform', h.platform],
          ['Load (1/5/15 min)', `${h.load_average.map((l) => l.toFixed(2)).join(' / ')} on ${h.cpu_count} CPUs`],
          [
            'Memory',
            `${formatBytes(h.memory.rss_bytes)} (heap ${formatBytes(h.memory.heap_used_bytes)} of ${formatBytes(h.memory.heap_total_bytes)})`,
          ],
        ]}
      />
      <FactCard
        title="Storage and database"
        testId="hosting-storage"
        rows={[
          ['Data folder', <Code key="p">{h.disk.path}</Code>],
          ['Free disk', `${formatBytes(h.disk.free_bytes)} of ${formatBytes(h.disk.total_bytes)}`],
          ['Engine', db.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'],
          ['Database size', formatBytes(db.size_bytes)],
          [
            'Migration',
            <Text key="m" size="sm" c={upToDate ? undefined : 'red'}>
              {db.migration_level ?? 'none'}
              {upToDate ? ' (latest)' : ` (latest: ${db.latest_migration})`}
            </Text>,
          ],
        ]}
      />
      <FactCard
        title="Version"
        testId="hosting-version"
        rows={[
          ['Leadgate', h.version],
          [
            'Build',
            h.build ? (
              <Code key="b">{h.build.slice(0, 12)}</Code>
            ) : (
              <Text key="b" size="sm" c="dimmed">
                not recorded
              </Text>
            ),
          ],
        ]}
      />
      <FactCard
        title="Mail"
        testId="hosting-mail"
        rows={
          h.mail.configured
            ? [
                ['Mail server', <Code key="r">{h.mail.relay}</Code>],
                ['Encryption', SECURITY[h.mail.security ?? 'none']],
                ['From', h.mail.from],
              ]
            : [
                [
                  'Invitations',
                  'Not mailed: no mail server is set up (SMTP_URL, MAIL_FROM). Links are handed over by hand.',
                ],
              ]
        }
      />
    </SimpleGrid>
  );
}
