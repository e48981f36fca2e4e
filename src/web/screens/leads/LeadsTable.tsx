import { Badge, Checkbox, Table, UnstyledButton } from '@mantine/core';
import type { KeyboardEvent } from 'react';
import { SORT_BY, type Column, type DateType, type Lead } from './filters';
import { TableBox, usePhone } from '../../ui/TableBox';
import { STATUS_COLOR } from './LeadDrawer';
import { useClock } from '../../ui/useClock';
import { scoreColor } from '../quality/flags';
import { useFlagInfo } from '../quality/useFlagInfo';

interface Props {
  rows: Lead[];
  columns: Column[];
  /** The date the rows are sorted by, and which way. */
  sort: { dateType: DateType; order: 'desc' | 'asc' };
  onSort: (dateType: DateType) => void;
  selected: ReadonlyMap<string, Lead>;
  onSelect: (leads: Lead[], on: boolean) => void;
  onOpen: (id: string) => void;
}

/** The columns a phone shows (of those chosen; the first chosen one when none of these is). */
const PHONE_COLUMNS = ['created_at', 'name', 'status'];

// One line per lead: long values end in an ellipsis, the whole value in the cell's tooltip.
const CELL = { whiteSpace: 'nowrap', maxWidth: 240, overflow: 'hidden', textOverflow: 'ellipsis' } as const;
// On a phone a value may take two lines: the three key columns then fit the screen.
const PHONE_CELL = { maxWidth: 160, overflowWrap: 'anywhere' } as const;

/** Arrow keys move between rows; Enter or Space opens the focused one (Space on a checkbox ticks it). */
function onRowKey(e: KeyboardEvent<HTMLTableRowElement>, open: () => void) {
  const row = e.currentTarget;
  const go = (to: Element | null | undefined) => {
    if (to instanceof HTMLElement) {
      e.preventDefault();
      to.focus();
    }
  };
  if (e.key === 'ArrowDown') go(row.nextElementSibling);
  else if (e.key === 'ArrowUp') go(row.previousElementSibling);
  else if (e.key === 'Home') go(row.parentElement?.firstElementChild);
  else if (e.key === 'End') go(row.parentElement?.lastElementChild);
  else if ((e.key === 'Enter' || e.key === ' ') && e.target === row) {
    e.preventDefault();
    open();
  }
}

function SortHeader({
  column,
  dateType,
  sort,
  onSort,
  visibleFrom,
}: {
  column: Column;
  dateType: DateType;
  sort: Props['sort'];
  onSort: Props['onSort'];
  visibleFrom?: 'sm';
}) {
  const active = sort.dateType === dateType;
  const arrow = active ? (sort.order === 'asc' ? '▲' : '▼') : '↕';
  const next = active && sort.order === 'desc' ? 'oldest first' : 'newest first';
  return (
    <Table.Th
      aria-sort={active ? (sort.order === 'asc' ? 'ascending' : 'descending') : undefined}
      style={{ whiteSpace: 'nowrap' }}
      visibleFrom={visibleFrom}
    >
      <UnstyledButton
        onClick={() => onSort(dateType)}
        title={`Sort by ${column.label.toLowerCase()} date, ${next}`}
        fw={700}
        fz="sm"
        data-testid={`sort-${column.key}`}
      >
        {column.label}{' '}
        <span aria-hidden style={{ opacity: active ? 1 : 0.45 }}>
          {arrow}
        </span>
      </UnstyledButton>
    </Table.Th>
  );
}

/** The leads as a compact table: sortable date columns, a selection, and rows reachable by keyboard. */
export function LeadsTable({ rows, columns, sort, onSort, selected, onSelect, onOpen }: Props) {
  const clock = useClock();
  const picked = rows.filter((r) => selected.has(r.id)).length;
  const onPhone = columns.some((c) => PHONE_COLUMNS.includes(c.key))
    ? (c: Column) => PHONE_COLUMNS.includes(c.key)
    : (c: Column) => c === columns[0];
  const wideOnly = (c: Column) => (onPhone(c) ? undefined : 'sm');
  const cell = usePhone() ? PHONE_CELL : CELL;
  const flagInfo = useFlagInfo();
  const flagsText = (lead: Lead) =>
    `${lead.flags.length} fraud ${lead.flags.length === 1 ? 'flag' : 'flags'}: ${lead.flags.map((f) => flagInfo(f).label).join(', ')}`;
  return (
    <TableBox minWidth={960}>
      <Table striped highlightOnHover data-testid="leads-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={36}>
              <Checkbox
                aria-label="Select all leads shown"
                checked={picked > 0 && picked === rows.length}
                indeterminate={picked > 0 && picked < rows.length}
                onChange={(e) => onSelect(rows, e.currentTarget.checked)}
                data-testid="select-all"
              />
            </Table.Th>
            {columns.map((c) =>
              SORT_BY[c.key] ? (
                <SortHeader
                  key={c.key}
                  column={c}
                  dateType={SORT_BY[c.key]}
                  sort={sort}
                  onSort={onSort}
                  visibleFrom={wideOnly(c)}
                />
              ) : (
                <Table.Th key={c.key} style={{ whiteSpace: 'nowrap' }} visibleFrom={wideOnly(c)}>
                  {c.label}
                </Table.Th>
              ),
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((lead) => {
            const name = `${lead.first_name} ${lead.last_name}`;
            return (
              <Table.Tr
                key={lead.id}
                data-testid="lead-row"
                data-lead-id={lead.id}
                tabIndex={0}
                aria-label={`Lead ${name}, ${lead.status}${lead.flags.length ? `, ${flagsText(lead)}` : ''}`}
                style={{ cursor: 'pointer' }}
                onClick={() => onOpen(lead.id)}
                onKeyDown={(e) => onRowKey(e, () => onOpen(lead.id))}
              >
                {/* The checkbox's cell takes the click, so ticking never opens the lead. */}
                <Table.Td onClick={(e) => e.stopPropagation()}>
                  <Checkbox
                    aria-label={`Select ${name}`}
                    checked={selected.has(lead.id)}
                    onChange={(e) => onSelect([lead], e.currentTarget.checked)}
                    data-testid="lead-select"
                  />
                </Table.Td>
                {columns.map((c) => {
                  const text = c.render(lead, clock);
                  const flagged = c.key === 'quality' && lead.flags.length > 0;
                  return (
                    <Table.Td
                      key={c.key}
                      style={cell}
                      title={flagged ? flagsText(lead) : text}
                      visibleFrom={wideOnly(c)}
                      data-column={c.key}
                    >
                      {c.key === 'status' ? (
                        <Badge color={STATUS_COLOR[lead.status]} data-testid="lead-row-status">
                          {lead.status}
                        </Badge>
                      ) : flagged ? (
                        // A flagged lead is marked: its score and how many flags it raised.
                        <Badge variant="light" color={scoreColor(lead.quality_score)} data-testid="lead-row-flags">
                          {text} · {lead.flags.length} {lead.flags.length === 1 ? 'flag' : 'flags'}
                        </Badge>
                      ) : (
                        text
                      )}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </TableBox>
  );
}
