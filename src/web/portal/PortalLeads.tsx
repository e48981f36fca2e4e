import {
  Alert,
  Badge,
  Button,
  Drawer,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { saveAnswer } from '../ui/download';
import { usePagedList } from '../ui/ListPage';
import { TableBox } from '../ui/TableBox';
import { useClock } from '../ui/useClock';
import { ZoneNote } from '../ui/ZoneNote';
import { usePortalMe } from './me';
import { LEAD_STATUSES, money, type LeadFilters, type PortalLead } from './types';

const SUB_IDS = ['sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'] as const;
const STATUS_COLOR: Record<string, string> = {
  delivered: 'green',
  rejected: 'red',
  duplicate: 'orange',
  failed: 'red',
  pending: 'yellow',
  new: 'gray',
};
const LABELS = { q: 'Lead id or sub id', date_from: 'From', date_to: 'To', country: 'Country' };

/** The provider's leads: filters (sub ids included), a table that keeps its key columns on a phone, a detail drawer, CSV. */
export default function PortalLeads() {
  const me = usePortalMe().data!;
  const clock = useClock();
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [filters, setFilters] = useState<LeadFilters>({});
  const [open, setOpen] = useState<PortalLead | null>(null);
  const campaigns = useQuery({
    queryKey: ['portal-campaigns'],
    queryFn: async () => must(await api.GET('/api/portal/campaigns', { params: { query: { limit: 500 } } })),
  });
  const leads = usePagedList(
    ['portal-leads', filters],
    async (cursor) =>
      must(await api.GET('/api/portal/leads', { params: { query: { ...filters, limit: 50, cursor } } }), LABELS),
    true,
  );
  const csv = useMutation({
    mutationFn: async () =>
      saveAnswer(
        await api.GET('/api/portal/leads/export.csv', { params: { query: filters }, parseAs: 'blob' }),
        'leads.csv',
      ),
  });

  function apply(e: FormEvent) {
    e.preventDefault();
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(draft)) {
      const value = v.trim();
      if (!value) continue;
      out[k] = k === 'status' || k === 'country' ? [k === 'country' ? value.toUpperCase() : value] : value;
    }
    setFilters(out as LeadFilters);
  }
  const set = (k: string) => (v: string | null) => setDraft((d) => ({ ...d, [k]: v ?? '' }));
  const rows = leads.data?.pages.flatMap((p) => p.data) ?? [];
  const { sale_status: showSale, payout: showPayout } = me.shows;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Leads
        </Title>
        <Button variant="default" onClick={() => csv.mutate()} loading={csv.isPending} data-testid="portal-leads-csv">
          Download CSV
        </Button>
      </Group>
      <form onSubmit={apply} data-testid="portal-lead-filters">
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
            <TextInput
              label={LABELS.q}
              description="Exact: a lead id or the value of any sub id"
              value={draft.q ?? ''}
              onChange={(e) => set('q')(e.currentTarget.value)}
            />
            <TextInput
              label="From"
              type="date"
              value={draft.date_from ?? ''}
              onChange={(e) => set('date_from')(e.currentTarget.value)}
            />
            <TextInput
              label="To"
              type="date"
              value={draft.date_to ?? ''}
              onChange={(e) => set('date_to')(e.currentTarget.value)}
            />
            <Select
              label="Status"
              clearable
              data={[...LEAD_STATUSES]}
              value={draft.status || null}
              onChange={set('status')}
            />
            <TextInput
              label="Country"
              placeholder="DE"
              maxLength={2}
              value={draft.country ?? ''}
              onChange={(e) => set('country')(e.currentTarget.value)}
            />
            <Select
              label="Campaign"
              clearable
              data={(campaigns.data?.data ?? []).map((c) => ({ value: c.id, label: c.name }))}
              value={draft.campaign_id || null}
              onChange={set('campaign_id')}
            />
            {SUB_IDS.slice(0, 2).map((k, i) => (
              <TextInput
                key={k}
                label={`Sub id ${i + 1}`}
                value={draft[k] ?? ''}
                onChange={(e) => set(k)(e.currentTarget.value)}
              />
            ))}
          </SimpleGrid>
          <Group>
            <Button type="submit">Apply filters</Button>
            <Button
              variant="subtle"
              onClick={() => {
                setDraft({});
                setFilters({});
              }}
            >
              Clear
            </Button>
          </Group>
        </Stack>
      </form>
      <ZoneNote />
      {[leads, csv].map(
        (q, i) =>
          q.isError && (
            <Alert key={i} color="red" role="alert">
              {problemText(q.error)}
            </Alert>
          ),
      )}
      {leads.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Text data-testid="portal-leads-empty">No leads match.</Text>
      ) : (
        <TableBox minWidth={900}>
          <Table striped highlightOnHover data-testid="portal-leads">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Received</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Sub id 1</Table.Th>
                <Table.Th visibleFrom="sm">Country</Table.Th>
                <Table.Th visibleFrom="sm">Campaign</Table.Th>
                {showSale && <Table.Th visibleFrom="sm">Sale status</Table.Th>}
                <Table.Th visibleFrom="sm">FTD</Table.Th>
                {showPayout && <Table.Th visibleFrom="sm">Payout</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((l) => (
                <Table.Tr
                  key={l.id}
                  data-testid="portal-lead-row"
                  onClick={() => setOpen(l)}
                  style={{ cursor: 'pointer' }}
                >
                  <Table.Td>
                    {/* The row opens with the keyboard too: the date is its button. */}
                    <Button variant="subtle" size="compact-sm" px={0} onClick={() => setOpen(l)}>
                      {clock.dateTime(l.created_at)}
                    </Button>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLOR[l.status] ?? 'gray'}>{l.status}</Badge>
                  </Table.Td>
                  <Table.Td style={{ wordBreak: 'break-all' }}>{l.sub_id1 ?? '—'}</Table.Td>
                  <Table.Td visibleFrom="sm">{l.country}</Table.Td>
                  <Table.Td visibleFrom="sm">{l.campaign_name ?? '—'}</Table.Td>
                  {showSale && <Table.Td visibleFrom="sm">{l.sale_status ?? '—'}</Table.Td>}
                  <Table.Td visibleFrom="sm">{l.ftd_at ? clock.dateTime(l.ftd_at) : '—'}</Table.Td>
                  {showPayout && <Table.Td visibleFrom="sm">{money(l.payout_cents, l.currency)}</Table.Td>}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {leads.hasNextPage && (
        <Button variant="default" onClick={() => leads.fetchNextPage()} loading={leads.isFetchingNextPage}>
          Load more
        </Button>
      )}
      <LeadDrawer lead={open} onClose={() => setOpen(null)} />
    </Stack>
  );
}

/** One lead, every field the provider is shown. */
function LeadDrawer({ lead, onClose }: { lead: PortalLead | null; onClose: () => void }) {
  const clock = useClock();
  const me = usePortalMe().data!;
  const fields: [string, string][] = lead
    ? [
        ['Lead id', lead.id],
        ['Received', clock.dateTime(lead.created_at)],
        ['Status', lead.status],
        ...(lead.reason ? [['Reason', lead.reason] as [string, string]] : []),
        ['Country', lead.country],
        ['Campaign', lead.campaign_name ?? '—'],
        ...SUB_IDS.map((k, i) => [`Sub id ${i + 1}`, lead[k] ?? '—'] as [string, string]),
        ...(me.shows.sale_status ? [['Sale status', lead.sale_status ?? '—'] as [string, string]] : []),
        ['FTD', lead.ftd_at ? clock.dateTime(lead.ftd_at) : '—'],
        ...(me.shows.payout ? [['Payout', money(lead.payout_cents, lead.currency)] as [string, string]] : []),
        ...(me.shows.contacts
          ? [['Email', lead.email ?? '—'] as [string, string], ['Phone', lead.phone ?? '—'] as [string, string]]
          : []),
      ]
    : [];
  return (
    <Drawer opened={lead !== null} onClose={onClose} position="right" title="Lead">
      <Stack gap="xs" data-testid="portal-lead-drawer">
        <Text size="xs" c="dimmed">
          Times in {clock.zone}
        </Text>
        {fields.map(([k, v]) => (
          <Group key={k} justify="space-between" wrap="nowrap" align="flex-start">
            <Text size="sm" c="dimmed">
              {k}
            </Text>
            <Text
              size="sm"
              ta="right"
              style={{ wordBreak: 'break-all' }}
              data-testid={`lead-${k.toLowerCase().replaceAll(' ', '-')}`}
            >
              {v}
            </Text>
          </Group>
        ))}
      </Stack>
    </Drawer>
  );
}
