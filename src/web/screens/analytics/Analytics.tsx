import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { saveAnswer } from '../../ui/download';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';
import { formToParams, parseForm, dayIn, type ReportForm } from './report';
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

  const downloadCsv = useMutation({
    mutationFn: async () => saveAnswer(await api.GET('/api/analytics/report/export', { params: { query: form }, parseAs: 'blob' }), 'report.csv'),
  });

  if (whoami.isPending) return <Loading />;
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  if (!allowed) return <Text data-testid="analytics-forbidden">Your role does not include analytics (analytics:view).</Text>;

  const data = report.isError ? undefined : report.data;
  const timeZone = data?.timezone ?? whoami.data?.operator.timezone ?? 'UTC';
  const covered = data ? { date_from: dayIn(data.timezone, new Date(data.from)), date_to: dayIn(data.timezone, new Date(Date.parse(data.to) - 1)) } : null;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Analytics</Title>
        <Button variant="default" onClick={() => downloadCsv.mutate()} loading={downloadCsv.isPending} disabled={!data} data-testid="report-csv">
          Download CSV
        </Button>
      </Group>
      <ReportPickers value={form} onApply={(f: ReportForm) => setParams(formToParams(f))} covered={covered} timeZone={timeZone} />
      {downloadCsv.isError && (
        <Alert color="red" role="alert" withCloseButton onClose={() => downloadCsv.reset()}>
          {problemText(downloadCsv.error)}
        </Alert>
      )}
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
                <ReportChart rows={data.rows} groupBy={data.group_by} thenBy={data.then_by} />
              </Card>
              <ReportTable key={search} report={data} />
            </>
          )}
        </>
      ) : null}
    </Stack>
  );
}
