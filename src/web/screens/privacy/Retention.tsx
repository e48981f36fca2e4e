import { Alert, Badge, Button, Group, NumberInput, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import type { Clock } from '../../ui/clock';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { fieldErrors, noErrors } from '../../ui/fields';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { refusal } from '../../ui/useEditorForm';

type Settings = paths['/api/privacy/retention']['get']['responses'][200]['content']['application/json'];
type Run = Settings['runs'][number];
type Field = 'contacts_days' | 'leads_days';

export const RETENTION_KEY = ['privacy-retention'];
/** While a run is going, its counts are refetched this often. */
const RUNNING_POLL_MS = 5_000;
const MAX_DAYS = 3650;
const DAY_MS = 86_400_000;

const LABELS: Record<Field, string> = { contacts_days: 'Purge contacts after', leads_days: 'Delete leads after' };

/** A limit being edited: on or off, and its days as typed (a number, or '' when cleared). */
interface Limit {
  on: boolean;
  days: number | string;
}

const limitOf = (days: number | null): Limit => ({ on: days !== null, days: days ?? 365 });

/** The days to send (null: kept for ever), or the inline message when they cannot be sent. */
function daysOf(limit: Limit): { days: number | null; error?: string } {
  if (!limit.on) return { days: null };
  const n = typeof limit.days === 'number' ? limit.days : Number(limit.days);
  if (limit.days === '' || !Number.isInteger(n) || n < 1 || n > MAX_DAYS)
    return { days: null, error: `Enter whole days from 1 to ${MAX_DAYS}.` };
  return { days: n };
}

/** True when the next run may remove more than before: a limit newly on, or shorter. */
const removesMore = (before: number | null, after: number | null) =>
  after !== null && (before === null || after < before);

/** Settings → Privacy → Retention (admins, sessions): how long contacts and leads are kept, and the job's runs. */
export function Retention() {
  const query = useQuery({
    queryKey: RETENTION_KEY,
    queryFn: async () => must(await api.GET('/api/privacy/retention')),
    refetchInterval: (q) => (q.state.data?.runs.some((r) => r.state === 'running') ? RUNNING_POLL_MS : false),
  });
  return (
    <Stack component="section" aria-labelledby="retention-title">
      <Title order={2} size="h4" id="retention-title">
        Retention
      </Title>
      <Text size="sm" c="dimmed" maw={640}>
        A background job applies these settings {cadence(query.data?.interval_seconds ?? null)}, to leads by the time
        they were received. What it purges or deletes cannot be brought back.
      </Text>
      {query.isError && (
        <Alert color="red" role="alert">
          {problemText(query.error)}
        </Alert>
      )}
      {query.isPending ? (
        <Loading />
      ) : query.data ? (
        <>
          <RetentionForm saved={query.data} />
          <Runs runs={query.data.runs} interval={query.data.interval_seconds} />
        </>
      ) : null}
    </Stack>
  );
}

function RetentionForm({ saved }: { saved: Settings }) {
  const queryClient = useQueryClient();
  const clock = useClock();
  const [limits, setLimits] = useState<Record<Field, Limit>>({
    contacts_days: limitOf(saved.contacts_days),
    leads_days: limitOf(saved.leads_days),
  });
  const [errors, setErrors] = useState(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [saving, setSaving] = useState(false);
  const [done, setDone] = useState(false);

  const contacts = daysOf(limits.contacts_days);
  const leads = daysOf(limits.leads_days);
  const invalid = Boolean(contacts.error || leads.error);
  const body = { contacts_days: contacts.days, leads_days: leads.days };

  function edit(field: Field, change: Partial<Limit>) {
    setLimits((l) => ({ ...l, [field]: { ...l[field], ...change } }));
    setErrors((e) => e.without([field]));
    setProblem(null);
    setDone(false);
  }

  async function save() {
    setSaving(true);
    try {
      const res = await api.PUT('/api/privacy/retention', { body });
      if (res.error || !res.data) {
        const p = res.error as Problem | undefined;
        setErrors(fieldErrors(p?.errors, LABELS));
        setProblem(p ? refusal(p, 'retention setting') : problemText(res.error));
        return;
      }
      setErrors(noErrors);
      setProblem(null);
      setDone(true);
      queryClient.setQueryData(RETENTION_KEY, res.data);
      await queryClient.invalidateQueries({ queryKey: RETENTION_KEY });
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    setDone(false);
    if (invalid) return;
    if (removesMore(saved.contacts_days, body.contacts_days) || removesMore(saved.leads_days, body.leads_days))
      setConfirming(true);
    else void save();
  }

  const before = (days: number) => clock.date(Date.now() - days * DAY_MS);
  return (
    <form onSubmit={submit} data-testid="retention-form">
      <Stack gap="md" maw={640}>
        <LimitInput
          field="contacts_days"
          limit={limits.contacts_days}
          error={contacts.error ?? errors.at('contacts_days')}
          onChange={(c) => edit('contacts_days', c)}
          description="Names, email, phone and IP of older leads are removed. Hashed digests of the email and phone are kept, so duplicate checks still find those contacts."
        />
        <LimitInput
          field="leads_days"
          limit={limits.leads_days}
          error={leads.error ?? errors.at('leads_days')}
          onChange={(c) => edit('leads_days', c)}
          description="Older leads are deleted with their attempts, history and events. The reports keep counting them."
        />
        {problem && (
          <Alert color="red" role="alert" data-testid="retention-error">
            {problem}
          </Alert>
        )}
        <Group>
          <Button type="submit" loading={saving} data-testid="retention-save">
            Save retention
          </Button>
          {done && (
            <Text size="sm" c="green" role="status">
              Saved.
            </Text>
          )}
        </Group>
      </Stack>
      <ConfirmDialog
        opened={confirming}
        title="Apply the new retention?"
        confirmLabel="Save and apply"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          await save();
          setConfirming(false);
        }}
      >
        <Text>At its next run ({cadence(saved.interval_seconds)}) the retention job will:</Text>
        <Stack gap={4} component="ul" m={0} pl="lg">
          {removesMore(saved.contacts_days, body.contacts_days) && body.contacts_days !== null && (
            <Text component="li">
              purge the names, email, phone and IP of every lead received before {before(body.contacts_days)} (
              {body.contacts_days} days ago), keeping only hashed digests for the duplicate checks;
            </Text>
          )}
          {removesMore(saved.leads_days, body.leads_days) && body.leads_days !== null && (
            <Text component="li">
              delete every lead received before {before(body.leads_days)} ({body.leads_days} days ago), with its
              attempts, history and events; the reports keep counting it;
            </Text>
          )}
        </Stack>
        <Text fw={600}>This cannot be undone.</Text>
      </ConfirmDialog>
    </form>
  );
}

function LimitInput({
  field,
  limit,
  error,
  onChange,
  description,
}: {
  field: Field;
  limit: Limit;
  error: string | undefined;
  onChange: (change: Partial<Limit>) => void;
  description: string;
}) {
  return (
    <Stack gap={4}>
      <Group align="flex-start" gap="sm">
        <Switch
          mt={8}
          label={LABELS[field]}
          aria-describedby={`${field}-note`}
          checked={limit.on}
          onChange={(e) => onChange({ on: e.currentTarget.checked })}
        />
        <NumberInput
          aria-label={`${LABELS[field]} (days)`}
          value={limit.days}
          onChange={(days) => onChange({ days })}
          disabled={!limit.on}
          allowDecimal={false}
          allowNegative={false}
          min={1}
          max={MAX_DAYS}
          clampBehavior="none"
          suffix=" days"
          error={limit.on ? error : undefined}
          w={140}
        />
      </Group>
      <Text size="sm" c="dimmed" id={`${field}-note`}>
        {limit.on ? description : `Off: kept for ever. ${description}`}
      </Text>
    </Stack>
  );
}

const STATE_COLOR: Record<Run['state'], string> = { running: 'blue', done: 'green', failed: 'red' };

/** How often the job runs on this server, in words ("every 10 minutes"; never: RETENTION_INTERVAL_MS is 0). */
function cadence(seconds: number | null): string {
  if (seconds === null) return 'only on a server where RETENTION_INTERVAL_MS is not 0 (it is 0 on this one)';
  if (seconds % 3600 === 0) return seconds === 3600 ? 'every hour' : `every ${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? 'every minute' : `every ${seconds / 60} minutes`;
  return `every ${seconds} seconds`;
}

function Runs({ runs, interval }: { runs: Run[]; interval: number | null }) {
  const clock = useClock();
  return (
    <Stack gap="xs">
      <Title order={3} size="h5">
        Runs
      </Title>
      {runs.length === 0 ? (
        <Text size="sm" data-testid="retention-runs-empty">
          No run yet: the job applies the settings {cadence(interval)}.
        </Text>
      ) : (
        <TableBox minWidth={720}>
          <Table data-testid="retention-runs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Started ({clock.zone})</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Contacts purged</Table.Th>
                <Table.Th>Leads deleted</Table.Th>
                <Table.Th visibleFrom="sm">Finished or error</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>{clock.dateTime(r.started_at)}</Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={STATE_COLOR[r.state]}>
                      {r.state}
                    </Badge>
                    {r.error && (
                      <Text size="xs" c="red" hiddenFrom="sm">
                        {r.error}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{r.contacts_purged}</Table.Td>
                  <Table.Td>{r.leads_deleted}</Table.Td>
                  <Table.Td visibleFrom="sm">
                    <RunEnd run={r} clock={clock} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
    </Stack>
  );
}

function RunEnd({ run, clock }: { run: Run; clock: Clock }) {
  if (run.error)
    return (
      <Text size="sm" c="red">
        {run.finished_at ? `${clock.dateTime(run.finished_at)}: ` : ''}
        {run.error}
      </Text>
    );
  if (run.state === 'running') return <Text size="sm">Running; last batch {clock.time(run.updated_at)}</Text>;
  return <Text size="sm">{clock.dateTime(run.finished_at)}</Text>;
}
