import { Badge, Stack, Table, Text } from '@mantine/core';
import type { paths } from '../../api/schema';
import { TableBox } from '../../ui/TableBox';
import { formatCount, formatMoney } from './report';

/** Columns hidden on a phone: the partner, the period, the rates and the verdict stay. */
const WIDE_ONLY = ['Period', 'Leads', 'FTDs', 'FTDs missing', 'Revenue'];

type Crg = paths['/api/analytics/crg']['get']['responses'][200]['content']['application/json'];

const pct = (n: number) => `${n.toLocaleString(undefined, { maximumFractionDigits: 2 })} %`;

/** Conversion-rate guarantees: for each partner and period, the rate promised and reached, and the shortfall. */
export function CrgReport({ data, range }: { data: Crg; range: string }) {
  return (
    <Stack>
      <Text size="sm" c="dimmed" data-testid="crg-range">
        {range}, by the day each lead was delivered under a CPL deal with a guarantee; FTDs of those leads whenever they
        came. Amounts in {data.currency}.
      </Text>
      {data.rows.length === 0 ? (
        <Text data-testid="crg-empty">No lead was delivered under a conversion-rate guarantee in this range.</Text>
      ) : (
        <TableBox minWidth={900}>
          <Table striped data-testid="crg-table">
            <Table.Thead>
              <Table.Tr>
                {[
                  'Partner',
                  'Period',
                  'Promised',
                  'Leads',
                  'FTDs',
                  'Actual',
                  'FTDs missing',
                  'Revenue',
                  'Shortfall',
                  '',
                ].map((h) => (
                  <Table.Th
                    key={h}
                    ta={['Partner', 'Period', ''].includes(h) ? undefined : 'right'}
                    visibleFrom={WIDE_ONLY.includes(h) ? 'sm' : undefined}
                  >
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.rows.map((r) => (
                <Table.Tr key={`${r.partner_id}.${r.period}.${r.promised_rate}`} data-testid="crg-row">
                  <Table.Td>{r.partner_name}</Table.Td>
                  <Table.Td visibleFrom="sm">{r.period}</Table.Td>
                  <Table.Td ta="right">{pct(r.promised_rate)}</Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {formatCount(r.leads)}
                  </Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {formatCount(r.ftds)}
                  </Table.Td>
                  <Table.Td ta="right">{pct(r.actual_rate)}</Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {r.shortfall_ftds.toLocaleString()}
                  </Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {formatMoney(r.revenue, data.currency)}
                  </Table.Td>
                  <Table.Td ta="right" data-testid="crg-shortfall">
                    {formatMoney(r.shortfall_amount, data.currency)}
                  </Table.Td>
                  <Table.Td>
                    <CrgBadge met={r.met} running={r.running} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
    </Stack>
  );
}

/** A running period is not short yet: on track while met so far, else running (its shortfall so far). */
function CrgBadge({ met, running }: { met: boolean; running: boolean }) {
  const [label, color, title] = running
    ? met
      ? ['On track', 'teal.9', 'The period is running: met so far']
      : ['Running', 'blue.9', 'The period is running: FTDs missing so far, not final']
    : met
      ? ['Met', 'green.9', 'The period has ended: the promise was met']
      : ['Short', 'red.9', 'The period has ended: the promise was not met'];
  return (
    <Badge variant="filled" color={color} title={title} data-testid="crg-state">
      {label}
    </Badge>
  );
}
