import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  NumberInput,
  Select,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import { Loading } from '../../Loading';
import { PullRunResult } from './PullRunResult';
import { EMPTY, toBody, toForm, whatItChanges, type Form, type Run } from './statusSyncForm';
import { useClock } from '../../ui/useClock';

/** The partner editor's "Status sync": the pull's settings, its health, and Pull now with a dry run. */
export function StatusSyncPanel({ partnerId, canEdit }: { partnerId: string; canEdit: boolean }) {
  const clock = useClock();
  const time = (iso: string | null) => (iso ? `${clock.dateTime(iso)} (${clock.zone})` : 'never');
  const queryClient = useQueryClient();
  const key = ['status-pull', partnerId];
  const pull = useQuery({
    queryKey: key,
    queryFn: async () => {
      // null: the partner has no status pull yet.
      return must(await api.GET('/api/partners/{id}/status-pull', { params: { path: { id: partnerId } } }));
    },
  });
  const [form, setForm] = useState<Form>(EMPTY);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [run, setRun] = useState<Run | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (pull.data) setForm(toForm(pull.data.config));
  }, [pull.data]);
  const set = (patch: Partial<Form>) => setForm((f) => ({ ...f, ...patch }));
  // No live change without a preview: the pull may run live once a dry run of the saved settings
  // was made (the server says so: dry_run_seen) and nothing that changes what it does is edited since.
  const stored = pull.data ? toForm(pull.data.config) : null;
  const unsaved = !stored || whatItChanges(form) !== whatItChanges(stored);
  const previewed = !!pull.data?.dry_run_seen && !unsaved;
  const mayRunLive = previewed || (!!stored?.enabled && !unsaved);
  const dryRunNumbers =
    run?.dry_run && previewed
      ? `The dry run would change ${run.changes.length} lead(s), ${run.changes.filter((c) => c.ftd).length} of them FTDs.`
      : null;

  async function save() {
    setProblem(null);
    setErrors({});
    setSaved(false);
    const r = await api.PUT('/api/partners/{id}/status-pull', {
      params: { path: { id: partnerId } },
      body: toBody(form),
    });
    if (r.error) {
      const p = r.error as Problem;
      setErrors(Object.fromEntries((p.errors ?? []).map((e) => [e.field.split(/[./]/)[0], e.message])));
      setProblem(p.errors?.length ? 'Not saved: please correct the fields marked below.' : problemText(p));
      return;
    }
    queryClient.setQueryData(key, r.data);
    setSaved(true);
  }

  async function pullNow(dryRun: boolean) {
    setBusy(true);
    setProblem(null);
    try {
      const r = await api.POST('/api/partners/{id}/status-pull/run', {
        params: { path: { id: partnerId } },
        body: { dry_run: dryRun },
      });
      if (r.error) return setProblem(problemText(r.error));
      setRun(r.data);
      await queryClient.invalidateQueries({ queryKey: key });
    } finally {
      setBusy(false);
    }
  }

  // Nothing to edit until the saved settings are read: edits made before would be overwritten
  // when they arrive, and a save would replace them with the empty form.
  if (pull.isPending || pull.isError)
    return (
      <Card withBorder data-testid="status-sync">
        {pull.isError ? (
          <Alert color="red" role="alert" title={`Status sync not loaded: ${problemText(pull.error)}`} />
        ) : (
          <Loading />
        )}
      </Card>
    );
  const health = pull.data?.health;
  return (
    <Card withBorder data-testid="status-sync">
      <Stack>
        <Title order={2} size="h3">
          Status sync
        </Title>
        <Text size="sm" c="dimmed">
          For partners that do not call the postback URL: Leadgate asks the partner's API for its leads' statuses on a
          schedule, and applies them as a postback would (a pulled FTD counts once, whichever comes first).
        </Text>
        {health && (
          <Group gap="lg" data-testid="sync-health">
            <Text size="sm">Last run: {time(health.last_run_at)}</Text>
            <Text size="sm">Leads updated: {health.last_updated}</Text>
            <Text size="sm">Next: {time(health.next_run_at)}</Text>
            {health.last_error ? (
              <Badge color="red" data-testid="sync-error">
                {health.last_error}
              </Badge>
            ) : (
              health.last_run_at && <Badge color="green">OK</Badge>
            )}
          </Group>
        )}
        {problem && <Alert color="red" role="alert" title={problem} data-testid="sync-errors" />}
        {saved && (
          <Alert color="green" data-testid="sync-saved">
            {stored?.enabled
              ? 'Saved. The first run is due now.'
              : 'Saved, not on schedule: make a dry run, then turn on Run on schedule.'}
          </Alert>
        )}
        <Group grow align="flex-start">
          <Select
            label="Method"
            data={['GET', 'POST']}
            value={form.method}
            onChange={(v) => set({ method: (v as 'GET' | 'POST') ?? 'GET' })}
            disabled={!canEdit}
            allowDeselect={false}
          />
          <Select
            label="Dates as"
            data={[
              { value: 'iso', label: 'ISO 8601' },
              { value: 'date', label: 'YYYY-MM-DD' },
              { value: 'unix', label: 'Unix seconds' },
            ]}
            value={form.date_format}
            onChange={(v) => set({ date_format: (v as Form['date_format']) ?? 'iso' })}
            disabled={!canEdit}
            allowDeselect={false}
          />
        </Group>
        <TextInput
          label="Statuses URL"
          description="{{from}}, {{to}}, {{page}} and {{page_size}} are filled in"
          value={form.url}
          onChange={(e) => set({ url: e.currentTarget.value })}
          error={errors.url}
          disabled={!canEdit}
        />
        <Textarea
          label="Headers"
          description="One per line: Name: value. Stored values are shown masked."
          autosize
          minRows={1}
          value={form.headers}
          onChange={(e) => set({ headers: e.currentTarget.value })}
          error={errors.request_headers}
          disabled={!canEdit}
        />
        <Group grow align="flex-start">
          <TextInput
            label="List path"
            description="Where the list is; empty: the answer"
            value={form.list_path}
            onChange={(e) => set({ list_path: e.currentTarget.value })}
            error={errors.list_path}
            disabled={!canEdit}
          />
          <TextInput
            label="Lead id path"
            value={form.lead_id_path}
            onChange={(e) => set({ lead_id_path: e.currentTarget.value })}
            error={errors.lead_id_path}
            disabled={!canEdit}
          />
          <TextInput
            label="Status path"
            value={form.status_path}
            onChange={(e) => set({ status_path: e.currentTarget.value })}
            error={errors.status_path}
            disabled={!canEdit}
          />
        </Group>
        <Group grow align="flex-start">
          <TextInput
            label="FTD path"
            description="A flag or the FTD date"
            value={form.ftd_path}
            onChange={(e) => set({ ftd_path: e.currentTarget.value })}
            error={errors.ftd_path}
            disabled={!canEdit}
          />
          <TextInput
            label="Revenue path"
            value={form.revenue_path}
            onChange={(e) => set({ revenue_path: e.currentTarget.value })}
            error={errors.revenue_path}
            disabled={!canEdit}
          />
        </Group>
        <Group grow align="flex-start">
          <NumberInput
            label="Every (minutes)"
            min={1}
            max={1440}
            value={form.interval_minutes}
            onChange={(v) => set({ interval_minutes: Number(v) || 0 })}
            error={errors.interval_minutes}
            disabled={!canEdit}
          />
          <NumberInput
            label="Look back (hours)"
            min={1}
            max={2160}
            value={form.lookback_hours}
            onChange={(v) => set({ lookback_hours: Number(v) || 0 })}
            error={errors.lookback_hours}
            disabled={!canEdit}
          />
        </Group>
        <Switch
          label="Paged ({{page}} counts up until a short page)"
          checked={form.paged}
          onChange={(e) => set({ paged: e.currentTarget.checked })}
          disabled={!canEdit}
        />
        {form.paged && (
          <Group grow>
            <NumberInput
              label="First page"
              min={0}
              max={1}
              value={form.first_page}
              onChange={(v) => set({ first_page: Number(v) })}
              disabled={!canEdit}
            />
            <NumberInput
              label="Page size"
              min={1}
              max={1000}
              value={form.page_size}
              onChange={(v) => set({ page_size: Number(v) })}
              disabled={!canEdit}
            />
            <NumberInput
              label="At most pages"
              min={1}
              max={100}
              value={form.max_pages}
              onChange={(v) => set({ max_pages: Number(v) })}
              disabled={!canEdit}
            />
          </Group>
        )}
        <Textarea
          label="Status words"
          description="One per line: partner word = Leadgate sale status, with [FTD] when it means a deposit. Other words are kept as they are."
          autosize
          minRows={2}
          value={form.status_map}
          onChange={(e) => set({ status_map: e.currentTarget.value })}
          error={errors.status_map}
          disabled={!canEdit}
        />
        <Switch
          label="Run on schedule"
          description={
            form.enabled
              ? unsaved && stored
                ? 'Changed settings need a dry run first: turn this off, save, then Pull now (dry run).'
                : dryRunNumbers
              : mayRunLive
                ? (dryRunNumbers ?? 'The saved settings have had a dry run.')
                : 'It can be turned on once you have seen what it would change: save these settings, then Pull now (dry run).'
          }
          checked={form.enabled}
          onChange={(e) => set({ enabled: e.currentTarget.checked })}
          error={errors.enabled}
          disabled={!canEdit || (!form.enabled && !mayRunLive)}
          data-testid="sync-enabled"
        />
        <Group>
          <Button onClick={() => void save()} disabled={!canEdit}>
            Save status sync
          </Button>
          {pull.data && (
            <>
              <Button
                variant="default"
                onClick={() => void pullNow(true)}
                loading={busy}
                disabled={!canEdit}
                data-testid="pull-dry-run"
              >
                Pull now (dry run)
              </Button>
              <Button
                variant="light"
                onClick={() => void pullNow(false)}
                loading={busy}
                disabled={!canEdit || !mayRunLive}
                title={mayRunLive ? undefined : 'Make a dry run of the saved settings first'}
              >
                Pull now and apply
              </Button>
            </>
          )}
        </Group>
        {run && <PullRunResult run={run} />}
      </Stack>
    </Card>
  );
}
