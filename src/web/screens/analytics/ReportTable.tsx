import { ActionIcon, Table, Text } from '@mantine/core';
import { Fragment, useState } from 'react';
import { TableBox } from '../../ui/TableBox';
import { dimensionLabel, MEASURES, type Measures, type Report } from './report';

/** The measures a phone shows; the others from `sm` up. */
const PHONE = ['leads', 'delivered', 'ftds'];
const wideOnly = (key: string) => (PHONE.includes(key) ? undefined : 'sm');

function Cells({ m, currency }: { m: Measures; currency: string }) {
  return (
    <>
      {MEASURES.map((c) => (
        <Table.Td
          key={c.key}
          ta="right"
          data-measure={c.key}
          visibleFrom={wideOnly(c.key)}
          style={{ whiteSpace: 'nowrap' }}
        >
          {c.format(m, currency)}
        </Table.Td>
      ))}
    </>
  );
}

/** Every row with every measure, then the totals; a row with then_by groups opens to show them. */
export function ReportTable({ report }: { report: Report }) {
  const [open, setOpen] = useState<Set<number>>(new Set());
  const toggle = (i: number) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (!next.delete(i)) next.add(i);
      return next;
    });
  const heading = report.then_by
    ? `${dimensionLabel(report.group_by)} / ${dimensionLabel(report.then_by)}`
    : dimensionLabel(report.group_by);

  return (
    <TableBox minWidth={1000}>
      <Table striped highlightOnHover data-testid="report-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{heading}</Table.Th>
            {MEASURES.map((c) => (
              <Table.Th key={c.key} ta="right" visibleFrom={wideOnly(c.key)}>
                {c.label}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {report.rows.map((row, i) => {
            const expandable = (row.children?.length ?? 0) > 0;
            return (
              <Fragment key={`${row.key ?? ''}-${i}`}>
                <Table.Tr data-testid="report-row" data-key={row.key ?? ''}>
                  <Table.Td>
                    {expandable && (
                      <ActionIcon
                        variant="subtle"
                        size="sm"
                        mr={4}
                        onClick={() => toggle(i)}
                        aria-expanded={open.has(i)}
                        aria-label={`${open.has(i) ? 'Collapse' : 'Expand'} ${row.label}`}
                      >
                        {open.has(i) ? '▾' : '▸'}
                      </ActionIcon>
                    )}
                    {row.label}
                  </Table.Td>
                  <Cells m={row} currency={report.currency} />
                </Table.Tr>
                {open.has(i) &&
                  row.children?.map((child, j) => (
                    <Table.Tr key={`${child.key ?? ''}-${j}`} data-testid="report-child-row">
                      <Table.Td pl={40}>
                        <Text size="sm" c="dimmed" span>
                          {child.label}
                        </Text>
                      </Table.Td>
                      <Cells m={child} currency={report.currency} />
                    </Table.Tr>
                  ))}
              </Fragment>
            );
          })}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr data-testid="report-totals" fw={700}>
            <Table.Td>Total</Table.Td>
            <Cells m={report.totals} currency={report.currency} />
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </TableBox>
  );
}
