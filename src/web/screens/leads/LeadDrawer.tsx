import { Alert, Anchor, Badge, Button, Drawer, Group, Stack, Table, Text, Timeline, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';
import { ConversionForm } from './ConversionForm';
import type { Attempt, LeadDetail } from './filters';
import { RedeliverModal } from './RedeliverModal';
import { AutologinOpens } from './AutologinOpens';
import { LeadQuality } from './LeadQuality';
import { CopyValueButton } from '../../ui/CopyValueButton';
import type { Clock } from '../../ui/clock';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { VERDICT, verdictReason } from '../../ui/verdicts';

export const STATUS_COLOR: Record<string, string> = {
  new: 'gray',
  pending: 'blue',
  held: 'yellow',
  delivered: 'green',
  rejected: 'orange',
  duplicate: 'grape',
  failed: 'red',
};
const OUTCOME_COLOR: Record<Attempt['outcome'], string> = {
  in_flight: 'blue',
  accepted: 'green',
  rejected: 'orange',
  timeout: 'red',
  error: 'red',
};

// Every field of the lead, in reading order; its quality, the autologin URL and the attempts (what
// an operator opens a lead for) come first, in their own blocks.
const FIELDS: [string, (l: LeadDetail, c: Clock) => string][] = [
  ['Id', (l) => l.id],
  ['Registered', (l, c) => c.dateTime(l.created_at)],
  ['Name', (l) => `${l.first_name} ${l.last_name}`],
  ['Email', (l) => l.email],
  ['Phone', (l) => l.phone],
  ['Country', (l) => l.country],
  ['IP', (l) => l.ip],
  ['Language', (l) => l.language ?? '—'],
  ['Funnel', (l) => l.funnel ?? '—'],
  ['Sub ID 1', (l) => l.sub_id1 ?? '—'],
  ['Sub ID 2', (l) => l.sub_id2 ?? '—'],
  ['Sub ID 3', (l) => l.sub_id3 ?? '—'],
  ['Sub ID 4', (l) => l.sub_id4 ?? '—'],
  ['Sub ID 5', (l) => l.sub_id5 ?? '—'],
  ['Traffic provider', (l) => l.traffic_provider_name ?? l.traffic_provider_id],
  ['Campaign', (l) => l.campaign_name ?? l.campaign_id ?? '—'],
  ['Flow', (l) => l.flow_name ?? l.flow_id ?? '—'],
  ['Partner', (l) => l.partner_name ?? l.partner_id ?? '—'],
  ['Reason', (l) => l.reason ?? '—'],
  ["Partner's lead id", (l) => l.partner_lead_id ?? '—'],
  ['Sale status', (l) => l.sale_status ?? '—'],
  ['Delivered', (l, c) => c.dateTime(l.delivered_at)],
  ['FTD', (l, c) => (l.is_ftd ? c.dateTime(l.ftd_at) : 'No')],
  ['Status updated', (l, c) => c.dateTime(l.status_updated_at)],
  ['Payout', (l) => `$${l.payout.toFixed(2)}`],
  ['Revenue', (l) => `$${l.revenue.toFixed(2)}`],
];

/** One lead in full: opened by clicking a table row, closed with `onClose`. */
export function LeadDrawer({ leadId, onClose }: { leadId: string | null; onClose: () => void }) {
  const lead = useQuery({
    queryKey: ['lead', leadId],
    enabled: leadId !== null,
    queryFn: async () => must(await api.GET('/api/leads/{id}', { params: { path: { id: leadId! } } })),
  });

  return (
    <Drawer
      opened={leadId !== null}
      onClose={onClose}
      position="right"
      size="lg"
      title={
        <Title order={2} size="h3">
          Lead
        </Title>
      }
    >
      {lead.isError && (
        <Alert color="red" role="alert">
          {problemText(lead.error)}
        </Alert>
      )}
      {lead.isPending && leadId !== null ? <Loading /> : lead.data && <LeadBody lead={lead.data} />}
    </Drawer>
  );
}

/** Redeliver, for a rejected or failed lead and an operator who may edit leads. */
function RedeliverButton({ lead }: { lead: LeadDetail }) {
  const whoami = useWhoami();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const can =
    (lead.status === 'rejected' || lead.status === 'failed') && !!whoami.data?.permissions.includes('leads:edit');
  // The dialog stays while open: its results show after the lead (refreshed) is no longer redeliverable.
  if (!can && !open) return null;
  return (
    <>
      {can && (
        <Button size="xs" variant="light" onClick={() => setOpen(true)}>
          Redeliver
        </Button>
      )}
      <RedeliverModal
        leads={[{ id: lead.id, name: `${lead.first_name} ${lead.last_name}`, country: lead.country }]}
        opened={open}
        onClose={() => setOpen(false)}
        onDone={() => {
          void queryClient.invalidateQueries({ queryKey: ['lead', lead.id] });
          void queryClient.invalidateQueries({ queryKey: ['leads'] });
        }}
      />
    </>
  );
}

const SOURCE_WORDS = { postback: 'partner postback', pull: 'status pull', operator: 'operator' } as const;

function LeadBody({ lead }: { lead: LeadDetail }) {
  const whoami = useWhoami();
  const clock = useClock();
  const canConvert = lead.status === 'delivered' && !!whoami.data?.permissions.includes('leads:edit');
  return (
    <Stack data-testid="lead-drawer">
      <Group justify="space-between">
        <Group>
          <Badge color={STATUS_COLOR[lead.status]} data-testid="lead-status">
            {lead.status}
          </Badge>
          <Text fw={500}>
            {lead.first_name} {lead.last_name}
          </Text>
        </Group>
        <RedeliverButton lead={lead} />
      </Group>
      <ZoneNote />
      <LeadQuality lead={lead} />
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Autologin URL
        </Text>
        {lead.autologin_url ? (
          <Group wrap="nowrap" align="flex-start">
            <Anchor
              href={lead.autologin_url}
              target="_blank"
              rel="noreferrer noopener"
              size="sm"
              style={{ wordBreak: 'break-all' }}
              data-testid="lead-autologin"
            >
              {lead.autologin_url}
            </Anchor>
            <CopyValueButton value={lead.autologin_url} size="xs" />
          </Group>
        ) : (
          <Text size="sm" c="dimmed">
            None: no partner returned one.
          </Text>
        )}
      </Stack>
      <AutologinOpens opens={lead.autologin_opens} />
      <Title order={2} size="h4">
        Delivery attempts
      </Title>
      {lead.attempts.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="attempts-empty">
          No partner has been tried.
        </Text>
      ) : (
        <Timeline active={lead.attempts.length - 1} bulletSize={18} lineWidth={2} data-testid="attempts">
          {lead.attempts.map((a) => (
            <Timeline.Item
              key={a.attempt_no}
              title={a.partner_name ?? a.partner_id}
              data-testid="attempt"
              color={OUTCOME_COLOR[a.outcome]}
            >
              <Group gap="xs">
                <Badge size="sm" color={OUTCOME_COLOR[a.outcome]} data-testid="attempt-outcome">
                  {a.outcome}
                </Badge>
                <Text size="xs" c="dimmed">
                  {clock.dateTime(a.requested_at)} · {a.duration_ms === null ? '—' : `${a.duration_ms} ms`} · HTTP{' '}
                  {a.http_status ?? 'no answer'}
                </Text>
              </Group>
              {a.reason && <Text size="sm">{a.reason}</Text>}
              {a.response_excerpt && (
                <Text size="xs" ff="monospace" c="dimmed" lineClamp={3} style={{ wordBreak: 'break-all' }}>
                  {a.response_excerpt}
                </Text>
              )}
            </Timeline.Item>
          ))}
        </Timeline>
      )}
      {lead.verdicts.length > 0 && (
        <Stack gap={4} data-testid="verdicts">
          <Title order={2} size="h4">
            Not offered to
          </Title>
          {lead.verdicts.map((v) => (
            <Text size="sm" key={v.partner_id} data-testid="verdict" data-verdict={v.verdict}>
              <b>{v.partner_name ?? v.partner_id}</b>{' '}
              <Badge component="span" size="sm" color={VERDICT[v.verdict].color} variant="filled">
                {VERDICT[v.verdict].label}
              </Badge>{' '}
              {verdictReason(v.verdict, v.reason)}
              {v.cap &&
                ` (${v.cap.used} / ${v.cap.cap} ${v.cap.counts === 'ftds' ? 'FTDs' : 'leads'} ${v.cap.window === 'day' ? 'that day' : v.cap.window === 'hour' ? 'that hour' : 'in all'})`}
            </Text>
          ))}
        </Stack>
      )}
      <Title order={2} size="h4">
        Status history
      </Title>
      {lead.status_history.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="history-empty">
          No sale status or FTD reported yet.
        </Text>
      ) : (
        <Table verticalSpacing={2} fz="sm" data-testid="status-history">
          <Table.Tbody>
            {lead.status_history.map((h, i) => (
              <Table.Tr key={i} data-testid="history-row">
                <Table.Td>{clock.dateTime(h.at)}</Table.Td>
                <Table.Td>
                  {h.previous_sale_status ?? '—'} → <b>{h.sale_status ?? '—'}</b>
                  {h.ftd_at && (
                    <Badge ml="xs" size="sm" color="teal">
                      FTD {clock.dateTime(h.ftd_at)}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Badge size="sm" variant="light" data-testid="history-source">
                    {SOURCE_WORDS[h.source]}
                  </Badge>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {canConvert && <ConversionForm leadId={lead.id} hasFtd={lead.ftd_at !== null} />}
      <Table withRowBorders={false} verticalSpacing={2} fz="sm">
        <Table.Tbody>
          {FIELDS.map(([label, value]) => (
            <Table.Tr key={label}>
              <Table.Th w={160}>{label}</Table.Th>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>{value(lead, clock)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
