import { Alert, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate } from 'react-router-dom';
import { api, must, notice, problemText, session } from '../api/client';
import { Loading } from '../Loading';
import { AuthCard } from './AuthCard';

export default function Login() {
  const navigate = useNavigate();
  const setup = useQuery({ queryKey: ['setup'], queryFn: async () => must(await api.GET('/api/setup')) });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (setup.isPending) return <Loading />;
  if (setup.data?.needed) return <Navigate to="/setup" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const data = must(await api.POST('/api/auth/login', { body: { email, password } }));
      session.set(data.token);
      notice.clear();
      navigate('/', { replace: true });
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
        <Stack>
          <TextInput label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
          <Button type="submit" loading={busy}>
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
