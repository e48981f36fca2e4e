import {
  Alert,
  Badge,
  Button,
  Code,
  Collapse,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useEffect, useState } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import type { FieldErrors } from '../../ui/fields';
import { fieldErrors, integrationOf, localErrors, withLocal, type PartnerForm, type TestResult } from './form';
import { leadOverrides, useSampleLead, type TestLead } from './sampleLead';

interface Props {
  /** null: a partner not saved yet (its integration is all in the form). */
  partnerId: string | null;
  form: PartnerForm;
  /** Field errors of the integration tested, shown at the editor's fields (null clears them). */
  onErrors: (errors: FieldErrors | null) => void;
}

// Long bodies and URLs wrap instead of running out of the panel.
const WRAP = { whiteSpace: 'pre-wrap', wordBreak: 'break-all' } as const;
const OUTCOME_COLOR = { accepted: 'green', rejected: 'orange', timeout: 'red', error: 'red' } as const;

const LEAD_FIELDS: { key: keyof TestLead; label: string }[] = [
  { key: 'first_name', label: 'First name' },
  { key: 'last_name', label: 'Last name' },
  { key: 'email', label: 'Email' },
  { key: 'phone', label: 'Phone' },
  { key: 'country', label: 'Country' },
  { key: 'ip', label: 'IP' },
  { key: 'language', label: 'Language' },
  { key: 'funnel', label: 'Funnel' },
  { key: 'sub_id1', label: 'Sub ID 1' },
  { key: 'sub_id2', label: 'Sub ID 2' },
  { key: 'sub_id3', label: 'Sub ID 3' },
  { key: 'sub_id4', label: 'Sub ID 4' },
  { key: 'sub_id5', label: 'Sub ID 5' },
];

/**
 * Sends a test lead, which the operator may edit, with the editor's current integration (saved
 * or not, before the first save too) and shows both sides.
 */
export function TestLeadPanel({ partnerId, form, onErrors }: Props) {
  const sample = useSampleLead();
  const [lead, setLead] = useState<TestLead | null>(null);
  const [editing, setEditing] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  useEffect(() => {
    if (sample.data && !lead) setLead(sample.data.lead);
  }, [sample.data, lead]);

  async function send() {
    setResult(null);
    setProblem(null);
    // As on Save: the browser's findings and the API's come back together (the API refuses while the browser has any).
    const local = localErrors(form);
    const overrides = sample.data && lead ? leadOverrides(sample.data.lead, lead) : {};
    setSending(true);
    try {
      const body = { integration: integrationOf(form), lead: overrides };
      const r = partnerId
        ? await api.POST('/api/partners/{id}/test', { params: { path: { id: partnerId } }, body })
        : await api.POST('/api/partners/test', { body });
      if (r.error) {
        const p = r.error as Problem;
        const [leadErrors, integration] = [
          (p.errors ?? []).filter((e) => e.field.startsWith('lead.')),
          (p.errors ?? []).filter((e) => !e.field.startsWith('lead.')),
        ];
        onErrors(integration.length || local.size ? withLocal(local, fieldErrors(integration, form.headers)) : null);
        if (leadErrors.length) setEditing(true);
        setProblem(
          p.errors?.length
            ? [
                integration.length || local.size ? 'Not sent: please correct the fields marked above.' : '',
                ...leadErrors.map((e) => `Test lead, ${e.field.slice(5).replace(/_/g, ' ')}: ${e.message}`),
              ]
                .filter(Boolean)
                .join(' ')
            : problemText(p),
        );
        return;
      }
      onErrors(null);
      setResult(r.data);
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setSending(false);
    }
  }

  return (
    <Paper withBorder p="md" data-testid="test-lead-panel">
      <Stack>
        <Group justify="space-between">
          <Title order={2} size="h4">
            Send test lead
          </Title>
          <Group>
            <Button variant="default" onClick={() => setEditing((v) => !v)} aria-expanded={editing} disabled={!lead}>
              {editing ? 'Hide test lead' : 'Edit test lead'}
            </Button>
            <Button variant="light" onClick={send} loading={sending}>
              Send test lead
            </Button>
          </Group>
        </Group>
        <Text size="sm" c="dimmed">
          Sends {lead ? `${lead.first_name} ${lead.last_name} (${lead.country})` : 'a sample lead'} once with the
          integration as it stands in this form, saved or not, exactly as a delivery would: the partner may register it.
          Nothing is stored here.
        </Text>
        <Collapse in={editing && lead !== null}>
          {lead && (
            <SimpleGrid cols={{ base: 1, sm: 2, md: 4 }} spacing="xs" data-testid="test-lead-fields">
              {LEAD_FIELDS.map((f) => (
                <TextInput
                  key={f.key}
                  label={f.label}
                  size="xs"
                  value={lead[f.key] ?? ''}
                  onChange={(e) => setLead({ ...lead, [f.key]: e.currentTarget.value })}
                />
              ))}
              <Button variant="subtle" size="xs" mt="lg" onClick={() => sample.data && setLead(sample.data.lead)}>
                Back to the sample lead
              </Button>
            </SimpleGrid>
          )}
        </Collapse>
        {problem && (
          <Alert color="red" role="alert">
            {problem}
          </Alert>
        )}
        {result && <TestResultView result={result} />}
      </Stack>
    </Paper>
  );
}

function TestResultView({ result }: { result: TestResult }) {
  const { request, response } = result;
  const headerLines = (h: Record<string, string>) =>
    Object.entries(h)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n');
  return (
    <Stack gap="xs" data-testid="test-lead-result">
      <Group>
        <Badge color={OUTCOME_COLOR[result.outcome]} size="lg" data-testid="test-lead-outcome">
          {result.outcome}
        </Badge>
        <Text size="sm">{result.duration_ms} ms</Text>
        {result.reason && (
          <Text size="sm" data-testid="test-lead-reason">
            {result.reason}
          </Text>
        )}
      </Group>
      {(result.partner_lead_id || result.autologin_url) && (
        <Text size="sm">
          {result.partner_lead_id && (
            <>
              Partner lead id: <Code>{result.partner_lead_id}</Code>{' '}
            </>
          )}
          {result.autologin_url && (
            <>
              Autologin: <Code>{result.autologin_url}</Code>
            </>
          )}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Stack gap={4}>
          <Text fw={500} size="sm">
            Request sent
          </Text>
          <Code block data-testid="test-lead-request" style={WRAP}>
            {`${request.method} ${request.url}\n${headerLines(request.headers)}${request.body !== null ? `\n\n${request.body}` : ''}`}
          </Code>
        </Stack>
        <Stack gap={4}>
          <Text fw={500} size="sm">
            Answer
          </Text>
          <Code block data-testid="test-lead-response" style={WRAP}>
            {response
              ? `${response.status}\n${headerLines(response.headers)}\n\n${response.body}${response.truncated ? '\n… (cut off)' : ''}`
              : 'No answer (timeout or connection error).'}
          </Code>
        </Stack>
      </SimpleGrid>
    </Stack>
  );
}
