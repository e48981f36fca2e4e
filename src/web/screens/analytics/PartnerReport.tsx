import { Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import type { paths } from '../../api/schema';
import { TableBox } from '../../ui/TableBox';
import { formatCount, formatRate, type ReportForm } from './report';

type Performance = paths['/api/analytics/partners']['get']['responses'][200]['content']['application/json'];
type Measures = Performance['totals'];

const answerTime = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** `wide`: shown from `sm` up, not on a phone. */
const COLUMNS: { label: string; hint: string; cell: (m: Measures) => string; wide?: 'sm' }[] = [
  { label: 'Attempts', hint: 'Calls to the partner that finished', cell: (m) => formatCount(m.attempts) },
  { label: 'Accepted', hint: 'Calls the partner accepted', cell: (m) => formatCount(m.accepted) },
  { label: 'Rejected', hint: 'Calls the partner refused', cell: (m) => formatCount(m.rejected), wide: 'sm' },
  { label: 'Failed', hint: 'Timeouts and errors: no usable answer', cell: (m) => formatCount(m.failed), wide: 'sm' },
  { label: 'Acceptance', hint: 'Accepted / attempts', cell: (m) => formatRate(m.acceptance_rate) },
  {
    label: 'Avg answer',
    hint: 'Mean time from the call to the complete answer',
    cell: (m) => answerTime(m.average_answer_ms),
    wide: 'sm',
  },
  {
    label: 'Link opens',
    hint: 'Tracked autologin links opened / handed out (— where the partner does not track them)',
    cell: (m) =>
      m.open_rate === null
        ? '—'
        : `${formatRate(m.open_rate)} (${formatCount(m.opened_links)}/${formatCount(m.tracked_links)})`,
    wide: 'sm',
  },
];

/** The partner report's query: the Analytics screen's dates and countries, split by traffic provider for the grid. */
export const partnerQuery = (form: ReportForm) => ({
  date_from: form.date_from,
  date_to: form.date_to,
  timezone: form.timezone,
  country: form.country,
  then_by: 'traffic_provider' as const,
});

/**
 * What each partner did with the leads offered to it, from the delivery attempts (a lead one
 * partner refused and the next took counts for both), and the traffic provider × partner grid.
 */
export function PartnerReport({ data, range }: { data: Performance; range: string }) {
  return (
    <Stack>
      <Text size="sm" c="dimmed" data-testid="partners-range">
        {range}, counted from delivery attempts by the time of the call: a lead one partner refused and the next took
        counts for both.
      </Text>
      {data.rows.length === 0 ? (
        <Text data-testid="partners-empty">No partner was called in this range.</Text>
      ) : (
        <>
          <PerformanceTable data={data} />
          <ProviderGrid data={data} />
        </>
      )}
    </Stack>
  );
}

function PerformanceTable({ data }: { data: Performance }) {
  return (
    <TableBox minWidth={900}>
      <Table striped data-testid="partners-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Partner</Table.Th>
            {COLUMNS.map((c) => (
              <Table.Th key={c.label} ta="right" title={c.hint} visibleFrom={c.wide}>
                {c.label}
              </Table.Th>
            ))}
            <Table.Th visibleFrom="sm">Top refusal reasons</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {data.rows.map((r) => (
            <Table.Tr key={r.key ?? ''} data-testid="partners-row" data-key={r.key ?? ''}>
              <Table.Td>{r.label}</Table.Td>
              {COLUMNS.map((c) => (
                <Table.Td key={c.label} ta="right" visibleFrom={c.wide}>
                  {c.cell(r)}
                </Table.Td>
              ))}
              <Table.Td maw={420} visibleFrom="sm">
                {r.top_reasons.length === 0 ? (
                  <Text size="sm" c="dimmed">
                    None
                  </Text>
                ) : (
                  <Stack gap={2}>
                    {r.top_reasons.slice(0, 3).map((x) => (
                      <Tooltip key={x.reason} label={x.reason} multiline maw={420} openDelay={300}>
                        <Text size="sm" truncate="end" data-testid="partners-reason">
                          {formatCount(x.attempts)} × {x.reason}
                        </Text>
                      </Tooltip>
                    ))}
                  </Stack>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr fw={700} data-testid="partners-totals">
            <Table.Td>Total</Table.Td>
            {COLUMNS.map((c) => (
              <Table.Td key={c.label} ta="right" visibleFrom={c.wide}>
                {c.cell(data.totals)}
              </Table.Td>
            ))}
            <Table.Td visibleFrom="sm" />
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </TableBox>
  );
}

/** Rows: traffic providers; columns: partners; a cell: acceptance rate and accepted / attempts. */
function ProviderGrid({ data }: { data: Performance }) {
  const providers = new Map<string, { label: string; attempts: number }>();
  for (const r of data.rows) {
    for (const c of r.children ?? []) {
      const p = providers.get(c.key ?? '') ?? { label: c.label, attempts: 0 };
      p.attempts += c.attempts;
      providers.set(c.key ?? '', p);
    }
  }
  const ordered = [...providers].sort((a, b) => b[1].attempts - a[1].attempts || a[1].label.localeCompare(b[1].label));
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        Traffic provider × partner
      </Title>
      <Text size="sm" c="dimmed">
        Acceptance rate of each provider's leads at each partner (accepted / attempts).
      </Text>
      <Table.ScrollContainer minWidth={200 + 140 * data.rows.length}>
        <Table withTableBorder withColumnBorders data-testid="provider-partner-grid">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Traffic provider</Table.Th>
              {data.rows.map((r) => (
                <Table.Th key={r.key ?? ''} ta="right">
                  {r.label}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {ordered.map(([key, p]) => (
              <Table.Tr key={key} data-testid="grid-row" data-key={key}>
                <Table.Th scope="row">{p.label}</Table.Th>
                {data.rows.map((r) => {
                  const cell = r.children?.find((c) => (c.key ?? '') === key);
                  return (
                    <Table.Td key={r.key ?? ''} ta="right" data-partner={r.key ?? ''}>
                      {cell ? (
                        <>
                          <Text span fw={600}>
                            {formatRate(cell.acceptance_rate)}
                          </Text>{' '}
                          <Text span size="xs" c="dimmed">
                            {formatCount(cell.accepted)}/{formatCount(cell.attempts)}
                          </Text>
                        </>
                      ) : (
                        <Text span c="dimmed" aria-label="no attempts">
                          —
                        </Text>
                      )}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
