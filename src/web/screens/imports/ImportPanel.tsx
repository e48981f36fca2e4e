import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  Progress,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { saveAnswer } from '../../ui/download';
import { TableBox } from '../../ui/TableBox';
import { useWhoami } from '../../whoami';
import { RouteFields, routeBody, STORE_ONLY, type RouteChoice } from './RouteFields';

export type Import = paths['/api/imports/{id}']['get']['responses'][200]['content']['application/json'];

const FIELDS: [field: string, label: string, required: boolean][] = [
  ['first_name', 'First name', true],
  ['last_name', 'Last name', true],
  ['email', 'Email', true],
  ['phone', 'Phone', true],
  ['country', 'Country', true],
  ['ip', 'IP address', true],
  ['language', 'Language', false],
  ['funnel', 'Funnel', false],
  ['sub_id1', 'Sub ID 1', false],
  ['sub_id2', 'Sub ID 2', false],
  ['sub_id3', 'Sub ID 3', false],
  ['sub_id4', 'Sub ID 4', false],
  ['sub_id5', 'Sub ID 5', false],
];
const LABELS: Record<string, string> = {
  ...Object.fromEntries(FIELDS.map(([f, label]) => [`mapping.${f}`, label])),
  traffic_provider_id: 'Traffic provider',
  campaign_id: 'Campaign',
  flow_id: 'Flow',
  partner_ids: 'Partners',
  per_minute: 'Leads per minute',
};

export const STATE_COLORS: Record<string, string> = {
  uploaded: 'blue',
  validating: 'cyan',
  validated: 'indigo',
  importing: 'green',
  done: 'teal',
  cancelled: 'gray',
  failed: 'red',
};

const working = (state: string) => state === 'validating' || state === 'importing';

/** One import: its mapping, target and actions, its progress, and the bad rows of its last run. */
export function ImportPanel({ id, suggested }: { id: string; suggested: Record<string, string> | null }) {
  const imp = useQuery({
    queryKey: ['import', id],
    queryFn: async () => must(await api.GET('/api/imports/{id}', { params: { path: { id } } })),
    refetchInterval: (q) => (q.state.data && working(q.state.data.state) ? 1000 : false),
  });
  const data = imp.data;
  const errors = useQuery({
    queryKey: ['import-errors', id, data?.state, data?.progress.rows_done],
    enabled: !!data && !working(data.state) && data.state !== 'uploaded',
    queryFn: async () =>
      must(await api.GET('/api/imports/{id}/errors', { params: { path: { id }, query: { limit: 100 } } })),
  });
  if (imp.isError) return <Alert color="red">{problemText(imp.error)}</Alert>;
  if (!data) return null;
  return (
    <Stack gap="sm" data-testid="import-panel">
      <Group justify="space-between">
        <Title order={2} size="h3">
          {data.name ?? 'Import'}
        </Title>
        <Badge color={STATE_COLORS[data.state]} data-testid="import-state">
          {data.state}
        </Badge>
      </Group>
      <Text size="sm">
        {data.rows.toLocaleString()} rows · {data.columns.length} columns
      </Text>
      {(data.state === 'uploaded' || data.state === 'validated') && (
        <MappingForm imp={data} suggested={suggested} onStarted={() => void imp.refetch()} />
      )}
      {data.state !== 'uploaded' && <ImportProgress imp={data} onChanged={() => void imp.refetch()} />}
      {data.injection_id && (
        <Text size="sm" data-testid="import-injection">
          The imported leads are sent by a re-injection job:{' '}
          <Anchor component={Link} to="/leads/injections">
            Leads → Re-injection
          </Anchor>
          .
        </Text>
      )}
      {data.error && <Alert color="red">{data.error}</Alert>}
      {errors.data && errors.data.data.length > 0 && (
        <Stack gap="xs">
          <Title order={3} size="h4">
            Bad rows
          </Title>
          <TableBox minWidth={600}>
            <Table data-testid="import-errors">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Row</Table.Th>
                  <Table.Th>Field</Table.Th>
                  <Table.Th>Reason</Table.Th>
                  <Table.Th visibleFrom="sm">Value</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {errors.data.data.map((e) => (
                  <Table.Tr key={`${e.row}:${e.field}`} data-testid="import-error-row">
                    <Table.Td>{e.row}</Table.Td>
                    <Table.Td>{e.column ?? e.field}</Table.Td>
                    <Table.Td>{e.reason}</Table.Td>
                    <Table.Td visibleFrom="sm">{e.value}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </TableBox>
          {errors.data.next_cursor && (
            <Text size="sm" c="dimmed">
              The first 100 are shown; download them all as CSV.
            </Text>
          )}
          <ErrorsDownload id={id} />
        </Stack>
      )}
    </Stack>
  );
}

function ErrorsDownload({ id }: { id: string }) {
  const download = useMutation({
    mutationFn: async () =>
      saveAnswer(
        await api.GET('/api/imports/{id}/errors.csv', { params: { path: { id } }, parseAs: 'blob' }),
        `import-${id}-errors.csv`,
      ),
  });
  return (
    <Group>
      <Button size="compact-sm" variant="subtle" onClick={() => download.mutate()} loading={download.isPending}>
        Download bad rows (CSV)
      </Button>
      {download.isError && (
        <Text c="red" size="sm" role="alert">
          {problemText(download.error)}
        </Text>
      )}
    </Group>
  );
}

function ImportProgress({ imp, onChanged }: { imp: Import; onChanged: () => void }) {
  const cancel = useMutation({
    mutationFn: async () => must(await api.POST('/api/imports/{id}/cancel', { params: { path: { id: imp.id } } })),
    onSettled: onChanged,
  });
  const c = imp.counts;
  const dry = imp.state === 'validating' || imp.state === 'validated';
  return (
    <Stack gap={4}>
      <Progress value={imp.progress.percent} aria-label={dry ? 'Dry run progress' : 'Import progress'} />
      <Text size="sm" data-testid="import-progress">
        {imp.progress.rows_done.toLocaleString()} of {imp.progress.rows.toLocaleString()} rows ({imp.progress.percent}%)
        · {c.good.toLocaleString()} good · {c.bad.toLocaleString()} bad · {c.duplicates.toLocaleString()} duplicates
        {dry ? '' : ` · ${c.imported.toLocaleString()} imported`}
      </Text>
      {working(imp.state) && (
        <Group>
          <Button size="compact-sm" variant="default" onClick={() => cancel.mutate()} loading={cancel.isPending}>
            Cancel
          </Button>
        </Group>
      )}
      {cancel.isError && (
        <Text c="red" size="sm" role="alert">
          {problemText(cancel.error)}
        </Text>
      )}
    </Stack>
  );
}

function MappingForm({
  imp,
  suggested,
  onStarted,
}: {
  imp: Import;
  suggested: Record<string, string> | null;
  onStarted: () => void;
}) {
  const [mapping, setMapping] = useState<Record<string, string>>(imp.mapping ?? suggested ?? {});
  const [providerId, setProviderId] = useState<string | null>(imp.traffic_provider_id);
  const [campaignId, setCampaignId] = useState<string | null>(imp.campaign_id);
  const [route, setRoute] = useState<RouteChoice>(STORE_ONLY);
  const permissions = useWhoami().data?.permissions ?? [];
  const listsProviders = permissions.includes('traffic_providers:view');
  const listsCampaigns = permissions.includes('campaigns:view');
  const providers = useQuery({
    queryKey: ['options', '/api/traffic-providers'],
    enabled: listsProviders,
    queryFn: async () => must(await api.GET('/api/traffic-providers', { params: { query: { limit: 500 } } })),
  });
  const campaigns = useQuery({
    queryKey: ['options', '/api/campaigns', providerId],
    enabled: !!providerId && listsCampaigns,
    queryFn: async () =>
      must(await api.GET('/api/campaigns', { params: { query: { limit: 500, traffic_provider_id: providerId! } } })),
  });
  const start = useMutation({
    mutationFn: async (kind: 'dry-run' | 'run') => {
      const body = { mapping, traffic_provider_id: providerId ?? '', campaign_id: campaignId ?? '' };
      return kind === 'dry-run'
        ? must(await api.POST('/api/imports/{id}/dry-run', { params: { path: { id: imp.id } }, body }), LABELS)
        : must(
            await api.POST('/api/imports/{id}/run', {
              params: { path: { id: imp.id } },
              body: { ...body, ...routeBody(route) },
            }),
            LABELS,
          );
    },
    onSuccess: onStarted,
  });
  const columns = imp.columns.map((c) => ({ value: c, label: c }));
  return (
    <Stack gap="sm">
      <Title order={3} size="h4">
        Columns
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }}>
        {FIELDS.map(([field, label, required]) => (
          <Select
            key={field}
            label={label}
            withAsterisk={required}
            data={columns}
            value={mapping[field] ?? null}
            clearable
            onChange={(v) => setMapping(({ [field]: _old, ...rest }) => (v === null ? rest : { ...rest, [field]: v }))}
          />
        ))}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        {listsProviders ? (
          <Select
            label="Traffic provider"
            withAsterisk
            searchable
            data={(providers.data?.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
            value={providerId}
            onChange={(v) => {
              setProviderId(v);
              setCampaignId(null);
            }}
          />
        ) : (
          <TextInput
            label="Traffic provider ID"
            withAsterisk
            value={providerId ?? ''}
            onChange={(e) => setProviderId(e.currentTarget.value || null)}
          />
        )}
        {listsCampaigns ? (
          <Select
            label="Campaign"
            withAsterisk
            searchable
            data={(campaigns.data?.data ?? []).map((c) => ({ value: c.id, label: c.name }))}
            value={campaignId}
            onChange={setCampaignId}
          />
        ) : (
          <TextInput
            label="Campaign ID"
            withAsterisk
            value={campaignId ?? ''}
            onChange={(e) => setCampaignId(e.currentTarget.value || null)}
          />
        )}
      </SimpleGrid>
      <RouteFields value={route} onChange={setRoute} />
      <Group>
        <Button variant="default" onClick={() => start.mutate('dry-run')} loading={start.isPending}>
          Dry run
        </Button>
        <Button onClick={() => start.mutate('run')} loading={start.isPending}>
          Import
        </Button>
      </Group>
      <Text size="xs" c="dimmed">
        The dry run checks every row as intake would and stores nothing. Import stores the good rows as new leads: sent
        nowhere, or, with “Store and send”, sent by one re-injection job at the pace chosen once the import is done.
      </Text>
      {start.isError && (
        <Alert color="red" role="alert">
          {problemText(start.error)}
        </Alert>
      )}
    </Stack>
  );
}
