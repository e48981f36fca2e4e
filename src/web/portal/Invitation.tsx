import { Button, PasswordInput, Stack, Text } from '@mantine/core';
import { useDocumentTitle } from '@mantine/hooks';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { api, must, notice, problemText, session } from '../api/client';
import { AuthCard } from '../screens/AuthCard';

// The server checks it too (config.ts MIN_PASSWORD_LENGTH); here it only spares a round trip.
const MIN_PASSWORD = 10;

/** The invitation token from the link's fragment (`#token=lgi_…`), which no request carries. */
const tokenOf = (hash: string) => new URLSearchParams(hash.replace(/^#/, '')).get('token') ?? '';

/**
 * /portal/invitation#token=…: the invited provider user sets a password (the token works once),
 * and is signed in to the portal with it at once.
 */
export default function Invitation() {
  useDocumentTitle('Set your password · Leadgate');
  const navigate = useNavigate();
  const [token] = useState(() => tokenOf(window.location.hash));
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      const { email } = must(await api.POST('/api/portal/invitations/accept', { body: { token, password } }), {
        token: 'Invitation',
        password: 'Password',
      });
      const signedIn = await api.POST('/api/auth/login', { body: { email, password } });
      if (!signedIn.response.ok) {
        // Two-factor or a refusal: the password is set, the sign-in page takes it from here.
        notice.set('Your password is set. Please sign in.');
        navigate('/login?next=%2Fportal', { replace: true });
        return;
      }
      session.set(must(signedIn).token);
      notice.clear();
      navigate('/portal', { replace: true });
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthCard title="Set your password" error={error}>
      {token ? (
        <form onSubmit={submit}>
          <Stack>
            <Text size="sm">
              You were invited to your traffic provider&apos;s portal. Choose a password of at least {MIN_PASSWORD}{' '}
              characters; you sign in with it and your email from now on.
            </Text>
            <PasswordInput
              label="New password"
              autoComplete="new-password"
              required
              minLength={MIN_PASSWORD}
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <PasswordInput
              label="Repeat the password"
              autoComplete="new-password"
              required
              value={again}
              onChange={(e) => setAgain(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Set password and sign in
            </Button>
          </Stack>
        </form>
      ) : (
        <Text data-testid="invitation-missing">
          This link has no invitation in it. Open the whole link you were given, or ask your account manager for a new
          one.
        </Text>
      )}
    </AuthCard>
  );
}
