import {
  Alert,
  Badge,
  Button,
  Group,
  MultiSelect,
  NumberInput,
  Paper,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import type { paths } from '../../api/schema';
import { api, problemText, type Problem } from '../../api/client';
import { instantIn } from '../../ui/clock';
import { useClock } from '../../ui/useClock';
import { VERDICT, verdictReason } from '../../ui/verdicts';
import { FLAG_OPTIONS, type Flag } from '../../ui/flags';

type Result = paths['/api/routing/simulate']['post']['responses'][200]['content']['application/json'];
type Candidate = Result['candidates'][number];

/** "50 / 50 today (DE)" for a full cap. */
function capText(c: NonNullable<Candidate['cap']>): string {
  const when = c.window === 'day' ? 'today' : c.window === 'hour' ? 'this hour' : 'in all';
  return `${c.used} / ${c.cap} ${c.counts === 'ftds' ? 'FTDs' : 'leads'} ${when}${c.country ? ` (${c.country})` : ''}`;
}

/** "Where would this lead go?": the flow's candidates for a lead from a country at a time, with why. */
export function SimulatePanel({ flowId }: { flowId: string }) {
  const clock = useClock();
  const [country, setCountry] = useState('DE');
  const [at, setAt] = useState('');
  const [flags, setFlags] = useState<Flag[]>([]);
  const [score, setScore] = useState<number | string>('');
  const [result, setResult] = useState<Result | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run() {
    setBusy(true);
    setProblem(null);
    setErrors({});
    setResult(null); // the last answer goes: what shows next answers this question
    try {
      // A datetime-local value is read in the operator's zone, as every date on the dashboard.
      const body = {
        country,
        flow_id: flowId,
        flags,
        quality_score: score === '' ? null : Number(score),
        ...(at ? { at: instantIn(clock.zone, at) } : {}),
      };
      const r = await api.POST('/api/routing/simulate', { body });
      if (r.error) {
        const p = r.error as Problem;
        setErrors(Object.fromEntries((p.errors ?? []).map((e) => [e.field, e.message])));
        setProblem(p.errors?.length ? null : problemText(p));
        setResult(null);
        return;
      }
      setResult(r.data);
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Paper withBorder p="md" data-testid="simulate-panel">
      <Stack>
        <Title order={2} size="h4">
          Where would this lead go?
        </Title>
        <Text size="sm" c="dimmed">
          The flow as saved, with the caps as counted now: nothing is stored, no partner is called.
        </Text>
        <Group align="flex-end">
          <TextInput
            label="Lead country"
            value={country}
            onChange={(e) => setCountry(e.currentTarget.value.toUpperCase())}
            maxLength={2}
            error={errors.country}
            w={120}
          />
          <TextInput
            label="Arriving at"
            description={`In ${clock.zone}; empty: now`}
            type="datetime-local"
            value={at}
            onChange={(e) => setAt(e.currentTarget.value)}
            error={errors.at}
            w={230}
          />
          <MultiSelect
            label="Lead's fraud flags"
            placeholder={flags.length ? undefined : 'None'}
            data={FLAG_OPTIONS}
            value={flags}
            onChange={(v) => setFlags(v as Flag[])}
            error={errors.flags}
            w={320}
          />
          <NumberInput
            label="Quality score"
            description="0–100; empty: not scored"
            placeholder="Not scored"
            value={score}
            onChange={setScore}
            allowDecimal={false}
            min={0}
            max={100}
            error={errors.quality_score}
            w={160}
          />
          <Button onClick={run} loading={busy}>
            Simulate
          </Button>
        </Group>
        {problem && (
          <Alert color="red" role="alert">
            {problem}
          </Alert>
        )}
        {result && <SimulationView result={result} />}
      </Stack>
    </Paper>
  );
}

function SimulationView({ result }: { result: Result }) {
  return (
    <Stack gap="xs" data-testid="simulation-result">
      <Text size="sm" data-testid="simulation-summary">
        {result.routable
          ? `A ${result.country} lead would be offered to the partners below, in this order (at most ${result.max_attempts} per lead).`
          : result.reason}
      </Text>
      {result.candidates.length > 0 && (
        <Table data-testid="simulation-table" verticalSpacing={4}>
          <Table.Thead>
            <Table.Tr>
              {['Partner', 'Priority', 'Verdict', 'Why', 'Chance first'].map((h) => (
                <Table.Th key={h}>{h}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {result.candidates.map((c) => (
              <Table.Tr key={c.target_id} data-testid="simulation-row">
                <Table.Td>{c.partner_name}</Table.Td>
                <Table.Td>{c.priority}</Table.Td>
                <Table.Td>
                  <Badge color={VERDICT[c.verdict].color} variant="filled" data-testid="simulation-verdict">
                    {VERDICT[c.verdict].label}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  {[c.reason && verdictReason(c.verdict, c.reason), c.cap && capText(c.cap)]
                    .filter(Boolean)
                    .join(': ') || '—'}
                </Table.Td>
                <Table.Td>{c.share === null ? '—' : `${Math.round(c.share * 100)} %`}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
