import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useDocumentTitle } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router-dom';
import { api, must, notice, problemText, session, type Problem } from '../api/client';
import { Loading } from '../Loading';
import { landing, returnTarget } from '../returnTo';
import { AuthCard } from './AuthCard';

export default function Login() {
  const navigate = useNavigate();
  // The page that sent the operator here (`?next=`), checked to be a path on this site.
  const [params] = useSearchParams();
  useDocumentTitle('Sign in · Leadgate');
  const setup = useQuery({ queryKey: ['setup'], queryFn: async () => must(await api.GET('/api/setup')) });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // After `totp_required`, the second step: the email and password stay in this state only.
  const [second, setSecond] = useState<'totp' | 'recovery' | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (setup.isPending) return <Loading />;
  if (setup.data?.needed) return <Navigate to="/setup" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const factor =
        second === 'totp' ? { totp_code: code.trim() } : second === 'recovery' ? { recovery_code: code.trim() } : {};
      const r = await api.POST('/api/auth/login', { body: { email, password, ...factor } });
      if ((r.error as Problem | undefined)?.code === 'totp_required') {
        setSecond('totp');
        return;
      }
      const data = must(r);
      session.set(data.token);
      notice.clear();
      navigate(landing(data.kind, returnTarget(params.get('next'))), { replace: true });
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  }

  const message = notice.get();
  return (
    <AuthCard title="Sign in to Leadgate" error={error ?? (setup.isError ? problemText(setup.error) : null)}>
      {message && (
        <Alert color="yellow" data-testid="login-notice">
          {message}
        </Alert>
      )}
      <form onSubmit={submit}>
        {second ? (
          <Stack>
            <Text size="sm">
              {second === 'totp'
                ? 'Enter the 6-digit code from your authenticator app.'
                : 'Enter one of your recovery codes. Each works once.'}
            </Text>
            <TextInput
              label={second === 'totp' ? 'Authentication code' : 'Recovery code'}
              inputMode={second === 'totp' ? 'numeric' : 'text'}
              autoComplete="one-time-code"
              required
              autoFocus
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Verify
            </Button>
            <Anchor
              component="button"
              type="button"
              size="sm"
              onClick={() => {
                setSecond(second === 'totp' ? 'recovery' : 'totp');
                setCode('');
                setError(null);
              }}
            >
              {second === 'totp' ? 'Use a recovery code' : 'Use the authenticator app'}
            </Anchor>
          </Stack>
        ) : (
          <Stack>
            <TextInput
              label="Email"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        )}
      </form>
    </AuthCard>
  );
}
