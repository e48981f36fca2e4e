import { Alert, Badge, Button, Code, Group, Image, List, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { CopyValueButton } from '../../ui/CopyValueButton';

type Status = paths['/api/profile']['get']['responses'][200]['content']['application/json']['two_factor'];
type Enrolment = paths['/api/profile/2fa/enrol']['post']['responses'][200]['content']['application/json'];

/** The call's data, or the text to show: for a refused code, the API's message about `code`. */
async function outcome<T>(
  call: Promise<{ data?: T; error?: unknown }>,
): Promise<{ data: T; error?: undefined } | { error: string }> {
  try {
    const r = await call;
    if (r.error === undefined) return { data: r.data as T };
    const p = r.error as Problem;
    return { error: p.errors?.find((e) => e.field === 'code')?.message ?? problemText(p) };
  } catch (err) {
    return { error: problemText(err) };
  }
}

/** Profile → Two-factor sign-in: enrol with a QR code, see recovery codes once, turn off. */
export function TwoFactor({ status }: { status: Status }) {
  const queryClient = useQueryClient();
  const [codes, setCodes] = useState<string[] | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['profile'] });
  const shown = (next: string[]) => {
    setCodes(next);
    void refresh();
  };

  return (
    <Stack data-testid="two-factor">
      <Group gap="sm">
        <Title order={2} size="h3">
          Two-factor sign-in
        </Title>
        <Badge color={status.enabled ? 'green' : 'gray'} variant="light" data-testid="two-factor-status">
          {status.enabled ? 'On' : 'Off'}
        </Badge>
      </Group>
      {codes ? (
        <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />
      ) : status.enabled ? (
        <Manage left={status.recovery_codes_left} onCodes={shown} onDisabled={refresh} />
      ) : (
        <Enrol onEnabled={shown} />
      )}
    </Stack>
  );
}

function Enrol({ onEnabled }: { onEnabled: (codes: string[]) => void }) {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function start() {
    setBusy(true);
    setError(null);
    const r = await outcome(api.POST('/api/profile/2fa/enrol'));
    setBusy(false);
    if (r.error !== undefined) return setError(r.error);
    setEnrolment(r.data);
    setCode('');
  }

  async function confirm(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    const r = await outcome(api.POST('/api/profile/2fa/confirm', { body: { code: code.trim() } }));
    setBusy(false);
    if (r.error !== undefined) return setError(r.error);
    setEnrolment(null);
    setError(null);
    onEnabled(r.data.recovery_codes);
  }

  if (!enrolment) {
    return (
      <>
        <Text size="sm" c="dimmed">
          Sign-in will also ask for a 6-digit code from an authenticator app on your phone.
        </Text>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Group>
          <Button variant="default" onClick={start} loading={busy}>
            Set up two-factor sign-in
          </Button>
        </Group>
      </>
    );
  }
  return (
    <form onSubmit={confirm}>
      <Stack>
        <Text size="sm">1. Scan this QR code with your authenticator app, or type the secret into it.</Text>
        <Image src={enrolment.qr} alt="QR code for your authenticator app" w={180} h={180} data-testid="totp-qr" />
        <Group gap="xs">
          <Code data-testid="totp-secret">{enrolment.secret}</Code>
          <CopyValueButton value={enrolment.secret} size="compact-xs" variant="subtle" />
        </Group>
        <Text size="sm">2. Enter the code the app shows to confirm.</Text>
        <TextInput
          label="Code from the app"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={6}
          w={200}
          value={code}
          onChange={(e) => setCode(e.currentTarget.value)}
          error={error}
        />
        <Group>
          <Button type="submit" loading={busy}>
            Turn on
          </Button>
          <Button variant="subtle" onClick={() => setEnrolment(null)}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = codes.join('\n') + '\n';
  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'leadgate-recovery-codes.txt';
    a.click();
    URL.revokeObjectURL(url);
  }
  return (
    <Stack data-testid="recovery-codes">
      <Alert color="yellow" title="Save these recovery codes now">
        Each one signs you in once if you lose your phone. They are shown only this once; Leadgate keeps only a hash of
        them.
      </Alert>
      <List spacing={2} ff="monospace" listStyleType="none">
        {codes.map((c) => (
          <List.Item key={c}>{c}</List.Item>
        ))}
      </List>
      <Group>
        <CopyValueButton value={text} variant="default" />
        <Button variant="default" onClick={download}>
          Download
        </Button>
        <Button onClick={onDone}>I have saved them</Button>
      </Group>
    </Stack>
  );
}

function Manage({
  left,
  onCodes,
  onDisabled,
}: {
  left: number;
  onCodes: (codes: string[]) => void;
  onDisabled: () => void;
}) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<'disable' | 'codes' | null>(null);

  async function run(action: 'disable' | 'codes', e?: FormEvent) {
    e?.preventDefault();
    setBusy(action);
    setError(null);
    const body = { code: code.trim() };
    const r = await outcome<{ recovery_codes: string[] } | null>(
      action === 'disable'
        ? api.POST('/api/profile/2fa/disable', { body })
        : api.POST('/api/profile/2fa/recovery-codes', { body }),
    );
    setBusy(null);
    if (r.error !== undefined) return setError(r.error);
    setCode('');
    if (r.data) onCodes(r.data.recovery_codes);
    else onDisabled();
  }

  return (
    <form onSubmit={(e) => run('disable', e)}>
      <Stack>
        <Text size="sm" c={left <= 2 ? 'orange' : 'dimmed'} data-testid="recovery-left">
          Sign-in asks for a code from your authenticator app. Recovery codes left: {left}.
        </Text>
        <TextInput
          label="Code from the app, or a recovery code"
          description="Needed to turn two-factor sign-in off or to get new recovery codes"
          autoComplete="one-time-code"
          w={320}
          value={code}
          onChange={(e) => setCode(e.currentTarget.value)}
          error={error}
        />
        <Group>
          <Button type="submit" color="red" variant="light" loading={busy === 'disable'} disabled={!code.trim()}>
            Turn off
          </Button>
          <Button variant="default" loading={busy === 'codes'} disabled={!code.trim()} onClick={() => run('codes')}>
            New recovery codes
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
