import { Alert, Button, Checkbox, Group, Menu, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { usePagedList } from '../../ui/ListPage';
import { liveQueryOptions, LiveStatus, useLivePause } from '../../ui/LiveRefresh';
import { downloadLeads } from './exportCsv';
import {
  COLUMNS,
  countActive,
  DATE_TYPES,
  filtersToParams,
  loadColumns,
  parseFilters,
  saveColumns,
  sortBy,
  type DateType,
  type FilterQuery,
  type Lead,
} from './filters';
import { LeadDrawer } from './LeadDrawer';
import { LeadFilters } from './LeadFilters';
import { LeadsBulk } from './LeadsBulk';
import { LeadsTable } from './LeadsTable';
import { ZoneNote } from '../../ui/ZoneNote';
import { useWhoami } from '../../whoami';
import { ReinjectModal } from './ReinjectModal';

const PAGE = 50;
/** The filters a refusal may name, by their labels on screen. */
const FILTER_LABELS = { q: 'Search', flag: 'Fraud flags', max_score: 'Max quality score' };

/** "1,234 leads", or "10,000+ leads" when the count stopped at its cap. */
function totalText(total: { count: number; exact: boolean }) {
  const n = total.count.toLocaleString();
  return total.exact ? `${n} ${total.count === 1 ? 'lead' : 'leads'}` : `${n}+ leads`;
}

/**
 * The search counts up to 10,000; past that, "Count exactly" asks for the exact figure (a full
 * count, so only on request, once per set of filters).
 */
function ExactCount({ filters, search }: { filters: FilterQuery; search: string }) {
  const [askedFor, setAskedFor] = useState<string | null>(null);
  const exact = useQuery({
    queryKey: ['leads-count', search],
    enabled: askedFor === search,
    queryFn: async () => must(await api.GET('/api/leads/count', { params: { query: filters } }), FILTER_LABELS),
  });
  if (askedFor !== search)
    return (
      <Button variant="subtle" size="compact-sm" onClick={() => setAskedFor(search)} data-testid="leads-count-exactly">
        Count exactly
      </Button>
    );
  if (exact.isError)
    return (
      <Text c="red" size="sm" role="alert">
        {problemText(exact.error)}
      </Text>
    );
  return (
    <Text c="dimmed" data-testid="leads-exact-total" aria-live="polite">
      {exact.data ? `exactly ${totalText({ count: exact.data.count, exact: true })}` : 'counting…'}
    </Text>
  );
}

export default function Leads() {
  const [params, setParams] = useSearchParams();
  // Memoised on the query string: the filter form resets its draft whenever this object changes.
  const search = params.toString();
  const filters = useMemo(() => parseFilters(new URLSearchParams(search)), [search]);
  const [columns, setColumns] = useState(loadColumns);
  const [openLead, setOpenLead] = useState<string | null>(null);
  const [reinject, setReinject] = useState(false);
  // A job goes through a flow: offered to a role that may also read the flows to choose from.
  const permissions = useWhoami().data?.permissions ?? [];
  const mayReinject = permissions.includes('leads:edit') && permissions.includes('flows:view');
  // Like Export selected (LeadsBulk): one mutation holds the download's progress and refusal.
  const exportCsv = useMutation({ mutationFn: () => downloadLeads(filters) });
  const [selected, setSelected] = useState<ReadonlyMap<string, Lead>>(new Map());
  // A selection belongs to the rows it was made on: new filters start a new one.
  useEffect(() => setSelected(new Map()), [search]);

  const [paused, setPaused] = useLivePause('leads');
  const leads = usePagedList(
    ['leads', search],
    async (cursor) =>
      must(
        await api.GET('/api/leads/search', { params: { query: { ...filters, limit: PAGE, cursor, total: !cursor } } }),
        FILTER_LABELS,
      ),
    true,
    liveQueryOptions(paused),
  );
  const rows = leads.data?.pages.flatMap((p) => p.data) ?? [];
  const total = leads.data?.pages[0]?.total ?? null;
  const shown = COLUMNS.filter((c) => columns.includes(c.key));
  const dateType: DateType = filters.date_type ?? 'registration';

  // The selected leads as last loaded (a refresh shows a redelivered lead's new status).
  const current = useMemo(() => {
    const byId = new Map(rows.map((r) => [r.id, r]));
    return new Map([...selected].map(([id, l]) => [id, byId.get(id) ?? l]));
  }, [rows, selected]);

  function select(leads: Lead[], on: boolean) {
    const next = new Map(selected);
    for (const l of leads) {
      if (on) next.set(l.id, l);
      else next.delete(l.id);
    }
    setSelected(next);
  }

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

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Group gap="sm" align="baseline">
          <Title order={1} size="h2">
            Leads
          </Title>
          {total && (
            <Text c="dimmed" data-testid="leads-total" title={total.exact ? undefined : 'Counted up to 10,000'}>
              {totalText(total)}
            </Text>
          )}
          {total && !total.exact && <ExactCount filters={filters} search={search} />}
        </Group>
        <Group>
          <LiveStatus
            updatedAt={leads.dataUpdatedAt}
            fetching={leads.isFetching && !leads.isFetchingNextPage}
            paused={paused}
            onPausedChange={setPaused}
            onRefresh={() => void leads.refetch()}
          />
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
                  leftSection={
                    <Checkbox size="xs" checked={columns.includes(c.key)} readOnly tabIndex={-1} aria-hidden />
                  }
                >
                  {c.label}
                </Menu.Item>
              ))}
            </Menu.Dropdown>
          </Menu>
          <Button variant="default" onClick={() => exportCsv.mutate()} loading={exportCsv.isPending}>
            Export CSV
          </Button>
          {mayReinject && (
            <Button variant="default" onClick={() => setReinject(true)}>
              Re-inject
            </Button>
          )}
        </Group>
      </Group>
      <LeadFilters value={filters} onApply={apply} />
      {dateType !== 'registration' && (
        <Text size="sm" c="dimmed" data-testid="date-type-note">
          By {DATE_TYPES.find((d) => d.value === dateType)!.label.toLowerCase()} date: leads without one are left out.
        </Text>
      )}
      {exportCsv.isError && (
        <Alert color="red" role="alert" withCloseButton onClose={() => exportCsv.reset()}>
          {problemText(exportCsv.error)}
        </Alert>
      )}
      {leads.isError && (
        // In place of the table: e.g. a whole email searched without leads:contacts says so, not "0 leads".
        <Alert color="red" role="alert" data-testid="leads-error">
          {problemText(leads.error)}
        </Alert>
      )}
      <ZoneNote />
      <LeadsBulk selected={current} onClear={() => setSelected(new Map())} onChanged={() => void leads.refetch()} />
      {leads.isPending ? (
        <Loading />
      ) : rows.length === 0 && !leads.isError ? (
        <Text data-testid="leads-empty">
          {countActive(filters) ? 'No leads match these filters.' : 'No leads yet.'}
        </Text>
      ) : (
        <LeadsTable
          rows={rows}
          columns={shown}
          sort={{ dateType, order: filters.order ?? 'desc' }}
          onSort={(d) => apply(sortBy(filters, d))}
          selected={selected}
          onSelect={select}
          onOpen={setOpenLead}
        />
      )}
      {leads.hasNextPage && (
        <Button variant="default" onClick={() => leads.fetchNextPage()} loading={leads.isFetchingNextPage}>
          Load more
        </Button>
      )}
      <LeadDrawer leadId={openLead} onClose={() => setOpenLead(null)} />
      <ReinjectModal filters={filters} opened={reinject} onClose={() => setReinject(false)} />
    </Stack>
  );
}
