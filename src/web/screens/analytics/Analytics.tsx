import { Alert, Button, Card, Group, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { saveAnswer } from '../../ui/download';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';
import { clockIn } from '../../ui/clock';
import { formToParams, parseForm, dayIn, type ReportForm } from './report';
import { PartnerReport, partnerQuery } from './PartnerReport';
import { CrgReport } from './CrgReport';
import { ReportChart } from './ReportChart';
import { ReportPickers } from './ReportPickers';
import { ReportTable } from './ReportTable';

type View = 'leads' | 'partners' | 'crg';

/** Two reports over the same dates: leads by period or entity, and partner performance from attempts. */
export default function Analytics() {
  const [params, setParams] = useSearchParams();
  // Memoised on the query string: the form resets its draft whenever this object changes.
  const search = params.toString();
  const form = useMemo(() => parseForm(new URLSearchParams(search)), [search]);
  const view: View = params.get('view') === 'partners' ? 'partners' : params.get('view') === 'crg' ? 'crg' : 'leads';
  const whoami = useWhoami();
  const allowed = whoami.data?.permissions.includes('analytics:view') ?? false;
  const apply = (f: ReportForm, nextView: View = view) => {
    const p = formToParams(f);
    if (nextView !== 'leads') p.set('view', nextView);
    setParams(p);
  };

  // The old answer stays on screen while the next loads, instead of a spinner flash.
  const report = useQuery({
    queryKey: ['analytics-report', form],
    enabled: allowed && view === 'leads',
    queryFn: async () => must(await api.GET('/api/analytics/report', { params: { query: form } })),
    placeholderData: keepPreviousData,
  });
  const perfQuery = partnerQuery(form);
  const perf = useQuery({
    queryKey: ['analytics-partners', perfQuery],
    enabled: allowed && view === 'partners',
    queryFn: async () => must(await api.GET('/api/analytics/partners', { params: { query: perfQuery } })),
    placeholderData: keepPreviousData,
  });
  const crgQuery = { date_from: form.date_from, date_to: form.date_to, timezone: form.timezone };
  const crg = useQuery({
    queryKey: ['analytics-crg', crgQuery],
    enabled: allowed && view === 'crg',
    queryFn: async () => must(await api.GET('/api/analytics/crg', { params: { query: crgQuery } })),
    placeholderData: keepPreviousData,
  });
  const downloadCsv = useMutation({
    mutationFn: async () =>
      view === 'leads'
        ? saveAnswer(
            await api.GET('/api/analytics/report/export', { params: { query: form }, parseAs: 'blob' }),
            'report.csv',
          )
        : saveAnswer(
            await api.GET('/api/analytics/partners/export', { params: { query: perfQuery }, parseAs: 'blob' }),
            'partners.csv',
          ),
  });

  if (whoami.isPending) return <Loading />;
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  if (!allowed)
    return <Text data-testid="analytics-forbidden">Your role does not include analytics (analytics:view).</Text>;

  const current = view === 'leads' ? report : view === 'partners' ? perf : crg;
  const data = current.isError ? undefined : current.data;
  const timeZone = data?.timezone ?? whoami.data?.operator.timezone ?? 'UTC';
  const covered = data
    ? {
        date_from: dayIn(data.timezone, new Date(data.from)),
        date_to: dayIn(data.timezone, new Date(Date.parse(data.to) - 1)),
      }
    : null;
  const inZone = clockIn(timeZone);
  const range = data && `${inZone.date(data.from)} – ${inZone.date(Date.parse(data.to) - 1)} (${data.timezone})`;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Analytics
        </Title>
        <Group>
          <SegmentedControl
            data={[
              { value: 'leads', label: 'Leads report' },
              { value: 'partners', label: 'Partner performance' },
              { value: 'crg', label: 'CRG deals' },
            ]}
            value={view}
            onChange={(v) => apply(form, v as View)}
            aria-label="Report"
            data-testid="analytics-view"
          />
          <Button
            variant="default"
            onClick={() => downloadCsv.mutate()}
            loading={downloadCsv.isPending}
            disabled={!data || view === 'crg'}
            data-testid="report-csv"
          >
            Download CSV
          </Button>
        </Group>
      </Group>
      <ReportPickers
        value={form}
        onApply={(f) => apply(f)}
        covered={covered}
        timeZone={timeZone}
        partners={view !== 'leads'}
        countries={view !== 'crg'}
      />
      {downloadCsv.isError && (
        <Alert color="red" role="alert" withCloseButton onClose={() => downloadCsv.reset()}>
          {problemText(downloadCsv.error)}
        </Alert>
      )}
      {current.isError && <ErrorAlert error={current.error} />}
      {current.isPending ? (
        <Loading />
      ) : view === 'crg' ? (
        crg.data && !crg.isError && <CrgReport data={crg.data} range={range!} />
      ) : view === 'partners' ? (
        perf.data && !perf.isError && <PartnerReport data={perf.data} range={range!} />
      ) : report.data && !report.isError ? (
        <>
          <Text size="sm" c="dimmed" data-testid="report-range">
            {range}, by {report.data.date_type === 'ftd' ? 'FTD date' : 'registration date'}, amounts in{' '}
            {report.data.currency}
          </Text>
          {report.data.totals.leads === 0 ? (
            <Text data-testid="report-empty">No leads in this range{form.country ? ' from these countries' : ''}.</Text>
          ) : (
            <>
              <Card withBorder>
                <ReportChart rows={report.data.rows} groupBy={report.data.group_by} thenBy={report.data.then_by} />
              </Card>
              <ReportTable key={search} report={report.data} />
            </>
          )}
        </>
      ) : null}
    </Stack>
  );
}
