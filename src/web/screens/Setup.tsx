import { Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useDocumentTitle } from '@mantine/hooks';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate } from 'react-router-dom';
import { api, must, problemText, session } from '../api/client';
import { Loading } from '../Loading';
import { AuthCard } from './AuthCard';

/** First run: no operator exists yet, so the first one is made here (the owner, role admin). */
export default function Setup() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  useDocumentTitle('Set up · Leadgate');
  const setup = useQuery({ queryKey: ['setup'], queryFn: async () => must(await api.GET('/api/setup')) });
  const [form, setForm] = useState({ name: '', email: '', password: '' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (setup.isPending) return <Loading />;
  if (setup.data && !setup.data.needed) return <Navigate to="/login" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const data = must(await api.POST('/api/setup', { body: form }));
      session.set(data.token);
      // Navigate first: both updates land in one render, so this screen does not see
      // "setup done" and redirect to /login on its way out.
      navigate('/', { replace: true });
      queryClient.setQueryData(['setup'], { needed: false });
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  }

  const field = (key: keyof typeof form) => ({
    value: form[key],
    onChange: (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [key]: e.currentTarget.value }),
  });
  return (
    <AuthCard title="Set up Leadgate" error={error ?? (setup.isError ? problemText(setup.error) : null)}>
      <Text size="sm">Create the owner account. It holds every permission and can invite other operators.</Text>
      <form onSubmit={submit}>
        <Stack>
          <TextInput label="Name" required autoComplete="name" {...field('name')} />
          <TextInput label="Email" type="email" required autoComplete="username" {...field('email')} />
          <PasswordInput label="Password" required autoComplete="new-password" {...field('password')} />
          <Button type="submit" loading={busy}>
            Create owner
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
