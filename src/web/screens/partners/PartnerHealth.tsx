import { Badge, Button, Group, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';

// Partner health (GET /api/partners/health), shown on the Overview and the Partners list: a
// badge from the partner's real calls, today's calls and cap fill, and pause/resume in one tap.

export type PartnerHealth =
  paths['/api/partners/health']['get']['responses'][200]['content']['application/json']['data'][number];

export function usePartnerHealth(refetchInterval: number | false = 30_000) {
  return useQuery({
    queryKey: ['partners', 'health'],
    queryFn: async () => must(await api.GET('/api/partners/health')),
    refetchInterval,
  });
}

const COLORS: Record<PartnerHealth['health'], string> = {
  failing: 'red',
  capped: 'orange',
  paused: 'gray',
  ok: 'green',
};
const LABELS: Record<PartnerHealth['health'], string> = {
  failing: 'failing',
  capped: 'capped',
  paused: 'paused',
  ok: 'active',
};

/** "failing" only from the partner's calls: a partner failing every call never reads "active". */
export function HealthBadge({ h }: { h: PartnerHealth }) {
  const why =
    h.health === 'failing'
      ? `${h.consecutive_failures} failed calls in a row`
      : h.health === 'capped'
        ? 'a cap is full'
        : undefined;
  return (
    <Badge color={COLORS[h.health]} title={why} data-testid="partner-health" data-health={h.health}>
      {LABELS[h.health]}
    </Badge>
  );
}

const fill = (c: PartnerHealth['caps']['day']) => (c ? `${c.used} / ${c.cap}` : null);

/** Today's calls by outcome and the caps' fill, in one short line. */
export function HealthNumbers({ h }: { h: PartnerHealth }) {
  const t = h.today;
  const caps = [
    fill(h.caps.day) && `day ${fill(h.caps.day)}`,
    fill(h.caps.hour) && `hour ${fill(h.caps.hour)}`,
    fill(h.caps.total) && `total ${fill(h.caps.total)}`,
  ].filter(Boolean);
  return (
    <Stack gap={0}>
      <Text size="sm" data-testid="partner-today">
        Today: {t.delivered} delivered of {t.calls} calls
        {t.failed ? `, ${t.failed} failed` : ''}
        {t.refused ? `, ${t.refused} refused` : ''}
      </Text>
      <Text size="xs" c="dimmed" data-testid="partner-cap-fill">
        {caps.length ? `Cap fill: ${caps.join(' · ')}` : 'No caps'}
        {h.consecutive_failures > 0 && ` · ${h.consecutive_failures} failed in a row`}
      </Text>
    </Stack>
  );
}

/**
 * Pause or resume in one tap (PATCH status: the same audited change as the editor's), with
 * partners:edit; nothing without it.
 */
export function PauseButton({ h }: { h: PartnerHealth }) {
  const whoami = useWhoami();
  const queryClient = useQueryClient();
  const pausing = h.status === 'active';
  const change = useMutation({
    mutationFn: async () =>
      must(
        await api.PATCH('/api/partners/{id}', {
          params: { path: { id: h.id } },
          body: { status: pausing ? 'paused' : 'active' },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['partners'] }),
  });
  if (!whoami.data?.permissions.includes('partners:edit')) return null;
  return (
    <Stack gap={4}>
      <Button
        size="compact-sm"
        variant={pausing ? 'light' : 'filled'}
        color={pausing ? 'red' : 'green'}
        loading={change.isPending}
        onClick={() => change.mutate()}
        aria-label={`${pausing ? 'Pause' : 'Resume'} ${h.name}`}
        data-testid="partner-pause"
      >
        {pausing ? 'Pause' : 'Resume'}
      </Button>
      {change.isError && <ErrorAlert error={change.error} />}
    </Stack>
  );
}

/** Badge and pause/resume side by side. */
export function HealthControls({ h }: { h: PartnerHealth }) {
  return (
    <Group gap="xs" wrap="nowrap">
      <HealthBadge h={h} />
      <PauseButton h={h} />
    </Group>
  );
}
