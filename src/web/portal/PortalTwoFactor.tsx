import { Alert, Anchor, Button, Code, Group, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../api/client';
import { CopyValueButton } from '../ui/CopyValueButton';

type Step = { kind: 'idle' } | { kind: 'enrol'; secret: string; uri: string } | { kind: 'on' } | { kind: 'off-done' };

/**
 * Two-factor sign-in for a provider user: a secret for its authenticator app (shown once),
 * confirmed with a current code; turned off with the password. The portal does not say whether
 * it is on until asked: "Set up" answers 409 while it is, and offers to turn it off instead.
 */
export function PortalTwoFactor() {
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(fn: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  }
  const start = () =>
    run(async () => {
      const r = await api.POST('/api/portal/two-factor');
      if (r.response.status === 409) return setStep({ kind: 'on' });
      const { secret, otpauth_uri } = must(r);
      setCode('');
      setStep({ kind: 'enrol', secret, uri: otpauth_uri });
    });
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const r = await api.POST('/api/portal/two-factor/confirm', { body: { code: code.trim() } });
      if (r.error) {
        const p = r.error as Problem;
        throw new Error(p.errors?.find((x) => x.field === 'code')?.message ?? problemText(p));
      }
      setStep({ kind: 'on' });
    });
  };
  const disable = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      must(await api.POST('/api/portal/two-factor/disable', { body: { current_password: password } }));
      setPassword('');
      setStep({ kind: 'off-done' });
    });
  };

  return (
    <Stack data-testid="portal-two-factor">
      <Title order={2} size="h4">
        Two-factor sign-in
      </Title>
      {error && (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      )}
      {step.kind === 'enrol' ? (
        <form onSubmit={confirm}>
          <Stack gap="xs">
            <Text size="sm">
              1. Add this secret to your authenticator app (or open the <Anchor href={step.uri}>otpauth link</Anchor> on
              this device). It is shown only now.
            </Text>
            <Group gap="xs">
              <Code data-testid="portal-totp-secret">{step.secret}</Code>
              <CopyValueButton value={step.secret} size="compact-xs" variant="subtle" />
            </Group>
            <TextInput
              label="2. The 6-digit code it shows"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy} w="fit-content">
              Turn on
            </Button>
          </Stack>
        </form>
      ) : step.kind === 'on' ? (
        <form onSubmit={disable}>
          <Stack gap="xs">
            <Text size="sm" data-testid="portal-two-factor-on">
              Two-factor sign-in is on: each sign-in asks for a code from your authenticator app.
            </Text>
            <PasswordInput
              label="Your password, to turn it off"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Button type="submit" color="red" variant="light" loading={busy} w="fit-content">
              Turn off
            </Button>
          </Stack>
        </form>
      ) : (
        <Stack gap="xs">
          <Text size="sm">
            {step.kind === 'off-done'
              ? 'Two-factor sign-in is off.'
              : 'A code from an authenticator app at each sign-in, besides your password.'}
          </Text>
          <Button variant="default" onClick={() => void start()} loading={busy} w="fit-content">
            Set up two-factor sign-in
          </Button>
        </Stack>
      )}
    </Stack>
  );
}
