import { Alert, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { usePagedList } from '../../ui/ListPage';
import { TableBox } from '../../ui/TableBox';
import { ZoneNote } from '../../ui/ZoneNote';
import { useWhoami } from '../../whoami';
import { BlocklistFilters, type Filters } from './BlocklistFilters';
import { BulkAddModal } from './BulkAddModal';
import { LIST_KEY, scopeText, useProviderChoice, type Entry, type Kind } from './entries';
import { EntryForm } from './EntryForm';
import { EntryRow, HEADERS, WIDE_ONLY } from './EntryRow';

const PAGE = 50;

/**
 * /quality/blocklists: the values intake refuses leads for (emails, email domains, phones, IP
 * addresses and blocks, sub ids), global or per traffic provider. The filters live in the URL.
 */
export default function Blocklists() {
  // What the role may do and read decides the filters and buttons: known before the list is asked for.
  const whoami = useWhoami();
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  if (!whoami.data) return <Loading />;
  return <BlocklistScreen permissions={whoami.data.permissions} />;
}

function BlocklistScreen({ permissions }: { permissions: string[] }) {
  const canEdit = permissions.includes('quality:edit');
  const contacts = permissions.includes('leads:contacts');
  const providers = useProviderChoice();
  const [params, setParams] = useSearchParams();
  const filters: Filters = {
    kind: params.get('kind') ?? '',
    // A filter this role is not offered (a link from another role) is not applied either.
    provider: providers.shown ? (params.get('scope') ?? '') : '',
    value: params.get('value') ?? '',
    expired: params.get('expired') === '1',
  };
  const [adding, setAdding] = useState(false);
  const [bulk, setBulk] = useState(false);
  const [added, setAdded] = useState<Entry | null>(null);

  const list = usePagedList(
    [LIST_KEY, filters.kind, filters.provider, filters.value, filters.expired],
    async (cursor) =>
      must(
        await api.GET('/api/blocklists', {
          params: {
            query: {
              limit: PAGE,
              cursor,
              kind: (filters.kind || undefined) as Kind | undefined,
              traffic_provider_id: filters.provider || undefined,
              value: filters.value || undefined,
              include_expired: filters.expired,
            },
          },
        }),
      ),
    true,
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const filtered = Boolean(filters.kind || filters.provider || filters.value);

  function setFilters(patch: Partial<Filters>) {
    const next = new URLSearchParams(params);
    const named: Record<keyof Filters, string> = {
      kind: 'kind',
      provider: 'scope',
      value: 'value',
      expired: 'expired',
    };
    for (const [key, v] of Object.entries(patch) as [keyof Filters, string | boolean][]) {
      if (v === true) next.set(named[key], '1');
      else if (v) next.set(named[key], String(v));
      else next.delete(named[key]);
    }
    setParams(next, { replace: true });
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Blocklists
        </Title>
        {canEdit && (
          <Group gap="xs">
            <Button variant="default" onClick={() => setBulk(true)}>
              Bulk add (CSV)
            </Button>
            <Button onClick={() => setAdding(true)}>Add entry</Button>
          </Group>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        Intake refuses a lead whose email, email domain, phone, IP address or sub ID is listed here (globally, or for
        its traffic provider) with status rejected; the provider is told only that the lead did not pass the quality
        checks.
        {!contacts && ' Emails and phones are shown masked: your role does not include leads:contacts.'}
      </Text>
      <BlocklistFilters value={filters} providers={providers} onChange={setFilters} />
      {added && (
        <Alert
          color="green"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setAdded(null)}
          data-testid="blocklist-added"
        >
          Added {added.value} ({added.traffic_provider_id ? scopeText(added) : 'global'}).
        </Alert>
      )}
      {list.isError && <ErrorAlert error={list.error} />}
      {list.isPending ? (
        <Loading />
      ) : rows.length === 0 && !list.isError ? (
        <Text data-testid="blocklist-empty">
          {filtered
            ? 'No entries match these filters.'
            : `No entries${filters.expired ? '' : ' in force'} yet.${canEdit ? ' Add one with “Add entry”.' : ''}`}
        </Text>
      ) : (
        <>
          <ZoneNote />
          <TableBox minWidth={canEdit ? 960 : 860}>
            <Table striped highlightOnHover data-testid="blocklist-table">
              <Table.Thead>
                <Table.Tr>
                  {HEADERS.map((h) => (
                    <Table.Th key={h} visibleFrom={WIDE_ONLY.includes(h) ? 'sm' : undefined}>
                      {h}
                    </Table.Th>
                  ))}
                  {canEdit && <Table.Th>Actions</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((e) => (
                  <EntryRow key={e.id} entry={e} canEdit={canEdit} />
                ))}
              </Table.Tbody>
            </Table>
          </TableBox>
        </>
      )}
      {list.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => list.fetchNextPage()} loading={list.isFetchingNextPage}>
            Load more
          </Button>
        </Group>
      )}
      {adding && (
        <EntryForm
          onClose={() => setAdding(false)}
          onAdded={(entry) => {
            setAdding(false);
            setAdded(entry);
          }}
        />
      )}
      {bulk && <BulkAddModal onClose={() => setBulk(false)} />}
    </Stack>
  );
}
