import { Card, Stack, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';
import { formToParams, parseForm, type ReportForm } from './report';
import { ReportChart } from './ReportChart';
import { ReportPickers } from './ReportPickers';
import { ReportTable } from './ReportTable';

const day = (iso: string, timeZone: string) => new Date(iso).toLocaleDateString(undefined, { timeZone, dateStyle: 'medium' });

export default function Analytics() {
  const [params, setParams] = useSearchParams();
  // Memoised on the query string: the form resets its draft whenever this object changes.
  const search = params.toString();
  const form = useMemo(() => parseForm(new URLSearchParams(search)), [search]);
  const whoami = useWhoami();
  const allowed = whoami.data?.permissions.includes('analytics:view') ?? false;

  const report = useQuery({
    queryKey: ['analytics-report', search],
    enabled: allowed,
    queryFn: async () => must(await api.GET('/api/analytics/report', { params: { query: form } })),
    // The old report stays on screen while the next loads, instead of a spinner flash.
    placeholderData: keepPreviousData,
  });

  if (whoami.isPending) return <Loading />;
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  if (!allowed) return <Text data-testid="analytics-forbidden">Your role does not include analytics (analytics:view).</Text>;

  const data = report.isError ? undefined : report.data;
  return (
    <Stack>
      <Title order={2}>Analytics</Title>
      <ReportPickers value={form} onApply={(f: ReportForm) => setParams(formToParams(f))} />
      {report.isError && <ErrorAlert error={report.error} />}
      {report.isPending ? (
        <Loading />
      ) : data ? (
        <>
          <Text size="sm" c="dimmed" data-testid="report-range">
            {day(data.from, data.timezone)} – {day(new Date(Date.parse(data.to) - 1).toISOString(), data.timezone)} ({data.timezone}), by{' '}
            {data.date_type === 'ftd' ? 'FTD date' : 'registration date'}, amounts in {data.currency}
          </Text>
          {data.totals.leads === 0 ? (
            <Text data-testid="report-empty">No leads in this range{form.country ? ' from these countries' : ''}.</Text>
          ) : (
            <>
              <Card withBorder>
                <ReportChart rows={data.rows} groupBy={data.group_by} />
              </Card>
              <ReportTable key={search} report={data} />
            </>
          )}
        </>
      ) : null}
    </Stack>
  );
}
