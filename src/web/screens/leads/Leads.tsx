import { Alert, Badge, Button, Checkbox, Group, Menu, Stack, Table, Text, Title } from '@mantine/core';
import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { COLUMNS, countActive, filtersToParams, loadColumns, parseFilters, saveColumns, type FilterQuery } from './filters';
import { LeadDrawer, STATUS_COLOR } from './LeadDrawer';
import { LeadFilters } from './LeadFilters';
import { saveBlob } from '../../ui/download';
import { usePagedList } from '../../ui/ListPage';
import { liveQueryOptions, LiveStatus, useLivePause } from '../../ui/LiveRefresh';

const PAGE = 50;

export default function Leads() {
  const [params, setParams] = useSearchParams();
  // Memoised on the query string: the filter form resets its draft whenever this object changes.
  const search = params.toString();
  const filters = useMemo(() => parseFilters(new URLSearchParams(search)), [search]);
  const [columns, setColumns] = useState(loadColumns);
  const [openLead, setOpenLead] = useState<string | null>(null);
  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<string | null>(null);

  const [paused, setPaused] = useLivePause('leads');
  const leads = usePagedList(
    ['leads', search],
    async (cursor) => must(await api.GET('/api/leads/search', { params: { query: { ...filters, limit: PAGE, cursor } } })),
    true,
    liveQueryOptions(paused),
  );
  const rows = leads.data?.pages.flatMap((p) => p.data) ?? [];
  const shown = COLUMNS.filter((c) => columns.includes(c.key));

  function apply(f: FilterQuery) {
    setParams(filtersToParams(f));
  }

  function toggleColumn(key: string) {
    // Keep the table's order, whatever order the boxes were ticked in; never zero columns.
    const next = COLUMNS.map((c) => c.key).filter((k) => (k === key ? !columns.includes(k) : columns.includes(k)));
    if (next.length === 0) return;
    setColumns(next);
    saveColumns(next);
  }

  // The export needs the session's Bearer token, so a plain link cannot fetch it: the client
  // fetches the file and hands the browser a blob to save.
  async function exportCsv() {
    setExporting(true);
    setExportError(null);
    try {
      const res = await api.GET('/api/leads/export', { params: { query: filters }, parseAs: 'blob' });
      if (res.error !== undefined || !res.data) throw new Error(problemText(res.error));
      const name = /filename="?([^";]+)"?/.exec(res.response.headers.get('content-disposition') ?? '')?.[1] ?? 'leads.csv';
      saveBlob(res.data as Blob, name);
    } catch (err) {
      setExportError(problemText(err));
    } finally {
      setExporting(false);
    }
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Leads</Title>
        <Group>
          <LiveStatus updatedAt={leads.dataUpdatedAt} fetching={leads.isFetching && !leads.isFetchingNextPage} paused={paused} onPausedChange={setPaused} onRefresh={() => void leads.refetch()} />
          <Menu closeOnItemClick={false} position="bottom-end">
            <Menu.Target>
              <Button variant="default">Columns</Button>
            </Menu.Target>
            <Menu.Dropdown data-testid="column-chooser">
              {COLUMNS.map((c) => (
                // The label is the item's own text, not the checkbox's: a <label> would re-click
                // the input and toggle the column twice.
                <Menu.Item
                  key={c.key}
                  role="menuitemcheckbox"
                  aria-checked={columns.includes(c.key)}
                  onClick={() => toggleColumn(c.key)}
                  leftSection={<Checkbox size="xs" checked={columns.includes(c.key)} readOnly tabIndex={-1} aria-hidden />}
                >
                  {c.label}
                </Menu.Item>
              ))}
            </Menu.Dropdown>
          </Menu>
          <Button variant="default" onClick={exportCsv} loading={exporting}>
            Export CSV
          </Button>
        </Group>
      </Group>
      <LeadFilters value={filters} onApply={apply} />
      {exportError && (
        <Alert color="red" role="alert" withCloseButton onClose={() => setExportError(null)}>
          {exportError}
        </Alert>
      )}
      {leads.isError && (
        <Alert color="red" role="alert">
          {problemText(leads.error)}
        </Alert>
      )}
      {leads.isPending ? (
        <Loading />
      ) : rows.length === 0 && !leads.isError ? (
        <Text data-testid="leads-empty">{countActive(filters) ? 'No leads match these filters.' : 'No leads yet.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={960}>
          <Table striped highlightOnHover data-testid="leads-table">
            <Table.Thead>
              <Table.Tr>
                {shown.map((c) => (
                  <Table.Th key={c.key}>{c.label}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((lead) => (
                <Table.Tr key={lead.id} data-testid="lead-row" data-lead-id={lead.id} style={{ cursor: 'pointer' }} onClick={() => setOpenLead(lead.id)}>
                  {shown.map((c) => (
                    <Table.Td key={c.key}>
                      {c.key === 'status' ? (
                        <Badge color={STATUS_COLOR[lead.status]} data-testid="lead-row-status">
                          {lead.status}
                        </Badge>
                      ) : (
                        c.render(lead)
                      )}
                    </Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {leads.hasNextPage && (
        <Button variant="default" onClick={() => leads.fetchNextPage()} loading={leads.isFetchingNextPage}>
          Load more
        </Button>
      )}
      <LeadDrawer leadId={openLead} onClose={() => setOpenLead(null)} />
    </Stack>
  );
}
