import { ActionIcon, Alert, Button, Card, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { DeliveryLog } from '../events/DeliveryLog';
import { useWhoami } from '../../whoami';

type Postback =
  paths['/api/traffic-providers/{id}/postbacks']['get']['responses'][200]['content']['application/json']['postbacks'][number];
type TestResult =
  paths['/api/traffic-providers/{id}/postbacks/test']['post']['responses'][200]['content']['application/json'];
type Delivery =
  paths['/api/traffic-providers/{id}/postbacks/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];
type Detail =
  paths['/api/traffic-providers/{id}/postbacks/deliveries/{deliveryId}']['get']['responses'][200]['content']['application/json'];

const EVENTS: { value: Postback['event_type']; label: string }[] = [
  { value: 'lead.received', label: 'Lead received' },
  { value: 'lead.delivered', label: 'Lead delivered' },
  { value: 'lead.rejected', label: 'Lead rejected' },
  { value: 'lead.failed', label: 'Lead failed' },
  { value: 'lead.ftd', label: 'FTD' },
  { value: 'lead.sale_status_changed', label: 'Sale status changed' },
];
const MACROS = '{lead_id} {sub_id1}…{sub_id5} {status} {sale_status} {payout} {country} {campaign_id} {ftd_at} {event}';
const ALL = '';

/**
 * Where a postbacks panel reads and writes: the operators' routes for one provider
 * (`operatorPostbacks`), or the portal's for the signed-in provider (portal/PortalPostbacks).
 */
export interface PostbackSource {
  key: unknown[];
  get: () => Promise<{ data?: { postbacks: Postback[] }; error?: unknown; response: Response }>;
  put: (postbacks: Postback[]) => Promise<{ data?: { postbacks: Postback[] }; error?: unknown }>;
  test: (body: { event_type: Postback['event_type']; campaign_id: string | null }) => Promise<{
    data?: TestResult;
    error?: unknown;
  }>;
  deliveries: () => Promise<{ data: Delivery[] }>;
  delivery: (id: string) => Promise<Detail>;
  retry?: (id: string) => Promise<{ error?: unknown }>;
  /** The campaigns a postback may be limited to (null: not listed; their ids are shown). */
  campaigns: { value: string; label: string }[] | null;
}

/** The operators' routes for a provider's postbacks, and its campaigns when the role may list them. */
export function useOperatorPostbacks(providerId: string): PostbackSource {
  const path = { id: providerId };
  // Without campaigns:view the names are not asked for: a campaign's postback shows its id.
  const mayListCampaigns = !!useWhoami().data?.permissions.includes('campaigns:view');
  const campaigns = useQuery({
    queryKey: ['provider-campaigns', providerId],
    enabled: mayListCampaigns,
    queryFn: async () =>
      must(
        await api.GET('/api/campaigns', {
          params: { query: { limit: 500, traffic_provider_id: providerId, include_archived: false } },
        }),
      ),
  });
  return {
    key: ['provider-postbacks', providerId],
    get: () => api.GET('/api/traffic-providers/{id}/postbacks', { params: { path } }),
    put: (postbacks) => api.PUT('/api/traffic-providers/{id}/postbacks', { params: { path }, body: { postbacks } }),
    test: (body) => api.POST('/api/traffic-providers/{id}/postbacks/test', { params: { path }, body }),
    deliveries: async () =>
      must(
        await api.GET('/api/traffic-providers/{id}/postbacks/deliveries', { params: { path, query: { limit: 50 } } }),
      ),
    delivery: async (d) =>
      must(
        await api.GET('/api/traffic-providers/{id}/postbacks/deliveries/{deliveryId}', {
          params: { path: { ...path, deliveryId: d } },
        }),
      ),
    retry: (d) =>
      api.POST('/api/traffic-providers/{id}/postbacks/deliveries/{deliveryId}/retry', {
        params: { path: { ...path, deliveryId: d } },
      }),
    campaigns: mayListCampaigns ? (campaigns.data?.data ?? []).map((c) => ({ value: c.id, label: c.name })) : null,
  };
}

/** Postbacks to a provider's tracker: a URL per event (all campaigns or one), a test send, the delivery log. */
export function PostbacksPanel({
  source,
  canEdit,
  title = "Postbacks to the provider's tracker",
  intro = "Leadgate calls these URLs (GET) when the provider's leads are delivered, rejected, deposit (FTD) or change sale status. The provider never sees which partner took a lead.",
}: {
  source: PostbackSource;
  canEdit: boolean;
  title?: string;
  intro?: string;
}) {
  const queryClient = useQueryClient();
  const key = source.key;
  const current = useQuery({ queryKey: key, queryFn: async () => must(await source.get()) });
  const [rows, setRows] = useState<Postback[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<TestResult | null>(null);
  useEffect(() => {
    if (current.data) setRows(current.data.postbacks);
  }, [current.data]);
  // Until the saved postbacks are read, nothing may be added or saved: a row added before they
  // arrive would be dropped when they do, and a save would replace them with an empty list.
  const editable = canEdit && current.data !== undefined;
  const campaignOptions = [
    { value: ALL, label: 'Every campaign' },
    ...(source.campaigns ?? []),
    ...(source.campaigns
      ? []
      : [...new Set(rows.flatMap((r) => (r.campaign_id ? [r.campaign_id] : [])))].map((id) => ({
          value: id,
          label: `Campaign ${id}`,
        }))),
  ];
  const update = (i: number, patch: Partial<Postback>) =>
    setRows((r) => r.map((x, j) => (j === i ? { ...x, ...patch } : x)));

  async function save() {
    setProblem(null);
    setErrors({});
    setSaved(false);
    const r = await source.put(rows);
    if (r.error) {
      const p = r.error as Problem;
      setErrors(Object.fromEntries((p.errors ?? []).map((e) => [e.field.replace(/^postbacks\//, ''), e.message])));
      setProblem(p.errors?.length ? 'Not saved: please correct the postbacks marked below.' : problemText(p));
      return;
    }
    queryClient.setQueryData(key, r.data);
    setSaved(true);
  }

  async function sendTest(row: Postback) {
    setProblem(null);
    setTest(null);
    const r = await source.test({ event_type: row.event_type, campaign_id: row.campaign_id });
    if (r.error) return setProblem(problemText(r.error));
    setTest(r.data ?? null);
  }

  return (
    <Card withBorder data-testid="provider-postbacks">
      <Stack>
        <Title order={2} size="h3">
          {title}
        </Title>
        <Text size="sm" c="dimmed">
          {intro} Macros: {MACROS}.
        </Text>
        {current.isPending && <Text size="sm">Loading postbacks…</Text>}
        {current.isError && (
          <Alert color="red" role="alert" title={`Postbacks not loaded: ${problemText(current.error)}`} />
        )}
        {problem && <Alert color="red" role="alert" title={problem} data-testid="postbacks-errors" />}
        {saved && (
          <Alert color="green" data-testid="postbacks-saved">
            Saved.
          </Alert>
        )}
        {rows.map((row, i) => (
          <Group key={i} align="flex-start" wrap="nowrap" data-testid="postback-row">
            <Select
              aria-label="Event"
              data={EVENTS}
              value={row.event_type}
              onChange={(v) => update(i, { event_type: (v as Postback['event_type']) ?? 'lead.ftd' })}
              disabled={!canEdit}
              allowDeselect={false}
              w={190}
              error={errors[String(i)]}
            />
            <Select
              aria-label="Campaign"
              data={campaignOptions}
              value={row.campaign_id ?? ALL}
              onChange={(v) => update(i, { campaign_id: v ? v : null })}
              disabled={!canEdit}
              allowDeselect={false}
              w={180}
              error={errors[`${i}/campaign_id`]}
            />
            <TextInput
              aria-label="Postback URL"
              placeholder="https://tracker.example/postback?click={sub_id1}&payout={payout}"
              value={row.url}
              onChange={(e) => update(i, { url: e.currentTarget.value })}
              disabled={!canEdit}
              style={{ flex: 1 }}
              error={errors[`${i}/url`]}
            />
            <Button
              variant="default"
              onClick={() => void sendTest(row)}
              disabled={!canEdit || !current.data?.postbacks.some((p) => p.event_type === row.event_type)}
            >
              Send test postback
            </Button>
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label="Remove this postback"
              onClick={() => setRows((r) => r.filter((_, j) => j !== i))}
              disabled={!canEdit}
              size="lg"
            >
              ×
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button
            variant="default"
            onClick={() => setRows((r) => [...r, { event_type: 'lead.ftd', campaign_id: null, url: '' }])}
            disabled={!editable}
          >
            Add postback
          </Button>
          <Button onClick={() => void save()} disabled={!editable}>
            Save postbacks
          </Button>
        </Group>
        {test && (
          <Alert
            color={test.ok ? 'green' : 'red'}
            title={test.ok ? 'The tracker answered' : 'The tracker did not accept it'}
            data-testid="postback-test"
          >
            <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
              GET {test.url}
            </Text>
            <Text size="sm">
              {test.http_status ? `HTTP ${test.http_status}` : 'No answer'} in {test.duration_ms} ms
              {test.error ? `: ${test.error}` : ''}
            </Text>
          </Alert>
        )}
        <Title order={2} size="h4">
          Sent
        </Title>
        <DeliveryLog
          queryKey={[...key, 'deliveries']}
          load={source.deliveries}
          loadOne={source.delivery}
          retry={source.retry ?? (async () => ({}))}
          canRetry={canEdit && source.retry !== undefined}
          testId="postback-deliveries"
        />
      </Stack>
    </Card>
  );
}
