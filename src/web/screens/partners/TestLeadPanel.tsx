import { Alert, Badge, Button, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import type { FieldErrors } from '../../ui/fields';
import { fieldErrors, integrationOf, localErrors, withLocal, type PartnerForm, type TestResult } from './form';

interface Props {
  partnerId: string;
  form: PartnerForm;
  /** Field errors of the integration tested, shown at the editor's fields (null clears them). */
  onErrors: (errors: FieldErrors | null) => void;
}

// Long bodies and URLs wrap instead of running out of the panel.
const WRAP = { whiteSpace: 'pre-wrap', wordBreak: 'break-all' } as const;
const OUTCOME_COLOR = { accepted: 'green', rejected: 'orange', timeout: 'red', error: 'red' } as const;

/** Sends the sample lead with the editor's current integration, saved or not, and shows both sides. */
export function TestLeadPanel({ partnerId, form, onErrors }: Props) {
  const [result, setResult] = useState<TestResult | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  async function send() {
    setResult(null);
    setProblem(null);
    // As on Save: the browser's findings and the API's come back together (the API refuses while the browser has any).
    const local = localErrors(form);
    setSending(true);
    try {
      const r = await api.POST('/api/partners/{id}/test', { params: { path: { id: partnerId } }, body: { integration: integrationOf(form) } });
      if (r.error) {
        const p = r.error as Problem;
        onErrors(p.errors?.length ? withLocal(local, fieldErrors(p.errors, form.headers)) : null);
        setProblem(p.errors?.length ? 'Not sent: please correct the integration fields marked above.' : problemText(p));
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
          <Title order={4}>Send test lead</Title>
          <Button variant="light" onClick={send} loading={sending}>
            Send test lead
          </Button>
        </Group>
        <Text size="sm" c="dimmed">
          Sends a sample lead once with the integration as it stands in this form, saved or not, exactly as a delivery would: the partner may register
          it. Nothing is stored here.
        </Text>
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
  const headerLines = (h: Record<string, string>) => Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\n');
  return (
    <Stack gap="xs" data-testid="test-lead-result">
      <Group>
        <Badge color={OUTCOME_COLOR[result.outcome]} size="lg" data-testid="test-lead-outcome">
          {result.outcome}
        </Badge>
        <Text size="sm">{result.duration_ms} ms</Text>
        {result.reason && <Text size="sm" data-testid="test-lead-reason">{result.reason}</Text>}
      </Group>
      {(result.partner_lead_id || result.autologin_url) && (
        <Text size="sm">
          {result.partner_lead_id && <>Partner lead id: <Code>{result.partner_lead_id}</Code> </>}
          {result.autologin_url && <>Autologin: <Code>{result.autologin_url}</Code></>}
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
