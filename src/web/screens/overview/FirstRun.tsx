import { Anchor, Button, Card, Group, List, Text, ThemeIcon, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';

// The first-run checklist of an empty install: what to create, in which order, each step ticked
// from real data and linked to where it is done. Gone once every step is done, or dismissed.

const DISMISSED = 'leadgate.first-run.dismissed';
const WAITING_FOR_LEAD_MS = 3_000;

type ListPath = '/api/traffic-providers' | '/api/partners' | '/api/flows' | '/api/campaigns';

/** Whether at least one (not archived) record exists; undefined while loading. */
function useAny(path: ListPath, enabled: boolean) {
  const q = useQuery({
    queryKey: ['first-run', path],
    queryFn: async () => must(await api.GET(path, { params: { query: { limit: 1 } } })).data.length > 0,
    enabled,
    refetchOnMount: 'always',
  });
  return q.data;
}

export function FirstRun() {
  const whoami = useWhoami();
  const may = (p: string) => whoami.data?.permissions.includes(p) ?? false;
  const allowed = ['traffic_providers:view', 'partners:view', 'flows:view', 'campaigns:view'].every(may);
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(DISMISSED) === '1');
  const show = allowed && !dismissed;
  const provider = useAny('/api/traffic-providers', show);
  const partner = useAny('/api/partners', show);
  const flow = useAny('/api/flows', show);
  const campaign = useAny('/api/campaigns', show);
  // The Overview's "Last 30 days" KPIs: the same query, so no request of its own; asked again
  // every few seconds once only the test lead is missing, so the step ticks when it arrives.
  const summary = useQuery({
    queryKey: ['analytics-summary', {}],
    queryFn: async () => must(await api.GET('/api/analytics/summary', { params: { query: {} } })),
    enabled: show,
    refetchInterval: (q) => (campaign && q.state.data?.totals.delivered === 0 ? WAITING_FOR_LEAD_MS : false),
  });
  const delivered = summary.data ? summary.data.totals.delivered > 0 : undefined;
  const steps = [
    {
      done: provider,
      to: '/traffic-providers/new',
      label: 'Add a traffic provider',
      hint: 'who sends you leads; copy its intake token',
    },
    { done: partner, to: '/partners/new', label: 'Add a partner', hint: 'who buys them: start from a template' },
    { done: flow, to: '/flows/new', label: 'Make a flow', hint: 'the partners a lead is offered to, in order' },
    { done: campaign, to: '/campaigns/new', label: 'Make a campaign', hint: "joins the provider's leads to the flow" },
    {
      done: delivered,
      to: '/traffic-providers',
      label: 'Send a test lead',
      hint: "post one to the intake API with the provider's token (the command is shown with the token)",
    },
  ];
  if (!show || steps.some((s) => s.done === undefined) || steps.every((s) => s.done)) return null;
  return (
    <Card withBorder data-testid="first-run">
      <Group justify="space-between" align="flex-start">
        <Title order={2} size="h4">
          Get started: your first delivered lead
        </Title>
        <Button
          variant="subtle"
          size="xs"
          onClick={() => {
            localStorage.setItem(DISMISSED, '1');
            setDismissed(true);
          }}
        >
          Dismiss
        </Button>
      </Group>
      <List spacing="xs" mt="xs" center>
        {steps.map((s, i) => (
          <List.Item
            key={s.label}
            data-testid="first-run-step"
            data-done={s.done ? 'true' : 'false'}
            icon={
              <ThemeIcon size={22} radius="xl" color={s.done ? 'green' : 'gray'} aria-hidden>
                {s.done ? '✓' : i + 1}
              </ThemeIcon>
            }
          >
            <Anchor component={Link} to={s.to} td={s.done ? 'line-through' : undefined}>
              {s.label}
            </Anchor>
            <Text span size="sm" c="dimmed">
              {' '}
              — {s.hint}
              {s.done ? ' (done)' : ''}
            </Text>
          </List.Item>
        ))}
      </List>
    </Card>
  );
}
