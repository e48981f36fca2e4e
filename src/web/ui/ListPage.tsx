import { Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import {
  keepPreviousData,
  useInfiniteQuery,
  type InfiniteData,
  type UseInfiniteQueryResult,
} from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router-dom';
import { Loading } from '../Loading';
import { ErrorAlert } from './EditorPage';
import { TableBox } from './TableBox';

interface Page<T> {
  data: T[];
  next_cursor?: string | null;
}

/**
 * A keyset-paged list, a page at a time as "Load more" asks (the API's {data, next_cursor}).
 * `keepPrevious`: while filters change, the table stays in place instead of flashing a spinner.
 * `refetch`: live refresh (LiveRefresh.tsx's liveQueryOptions); every loaded page is fetched again.
 */
export function usePagedList<P extends Page<unknown>>(
  queryKey: unknown[],
  fetchPage: (cursor: string | undefined) => Promise<P>,
  keepPrevious = false,
  refetch: { refetchInterval?: number | false; refetchIntervalInBackground?: boolean } = {},
) {
  return useInfiniteQuery({
    queryKey,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    ...(keepPrevious ? { placeholderData: keepPreviousData } : {}),
    ...refetch,
  });
}

interface Props<T> {
  title: string;
  /** The "New …" button; disabled without the edit permission. */
  create: { label: string; to: string; allowed: boolean };
  intro: ReactNode;
  filters?: ReactNode;
  list: UseInfiniteQueryResult<InfiniteData<Page<T>>>;
  /** Shown instead of the table when there is nothing to list. */
  empty: ReactNode;
  /** Prefix of the test ids: `${testId}-empty`, `${testId}-table`. */
  testId: string;
  headers: string[];
  /** Headers of secondary columns, hidden on a phone (their cells carry `visibleFrom="sm"`). */
  wideOnly?: string[];
  minWidth?: number;
  row: (item: T) => ReactNode;
}

/** The list screen of a resource: title and New, intro, filters, then loading, error, empty or the table, and Load more. */
export function ListPage<T>({
  title,
  create,
  intro,
  filters,
  list,
  empty,
  testId,
  headers,
  wideOnly = [],
  minWidth = 800,
  row,
}: Props<T>) {
  const navigate = useNavigate();
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          {title}
        </Title>
        <Button onClick={() => navigate(create.to)} disabled={!create.allowed}>
          {create.label}
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        {intro}
      </Text>
      {filters}
      {list.isError && <ErrorAlert error={list.error} />}
      {list.isPending ? (
        <Loading />
      ) : rows.length === 0 && !list.isError ? (
        <Text data-testid={`${testId}-empty`}>{empty}</Text>
      ) : (
        <TableBox minWidth={minWidth}>
          <Table striped highlightOnHover data-testid={`${testId}-table`}>
            <Table.Thead>
              <Table.Tr>
                {headers.map((h) => (
                  <Table.Th key={h} visibleFrom={wideOnly.includes(h) ? 'sm' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>{rows.map(row)}</Table.Tbody>
          </Table>
        </TableBox>
      )}
      {list.hasNextPage && (
        <Button variant="default" onClick={() => list.fetchNextPage()} loading={list.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
