import { Alert, Badge, Button, Divider, Group, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { fieldErrors, noErrors } from '../../ui/fields';
import { refusal } from '../../ui/useEditorForm';
import { useUnsavedGuard } from '../../ui/useUnsavedGuard';
import { TimezoneSelect } from '../../ui/inputs';
import { Sessions } from './Sessions';
import { TwoFactor } from './TwoFactor';

type ProfileData = paths['/api/profile']['get']['responses'][200]['content']['application/json'];

/** /profile: every operator's own details, password, two-factor sign-in and sessions (sessions only: keys are refused). */
export default function Profile() {
  const profile = useQuery({ queryKey: ['profile'], queryFn: async () => must(await api.GET('/api/profile')) });
  return (
    <Stack maw={720}>
      <Title order={1} size="h2">
        Profile
      </Title>
      {profile.isPending ? (
        <Loading />
      ) : profile.isError ? (
        <ErrorAlert error={profile.error} />
      ) : (
        <>
          <DetailsForm profile={profile.data} />
          <Divider my="sm" />
          <PasswordForm />
          <Divider my="sm" />
          <TwoFactor status={profile.data.two_factor} />
          <Divider my="sm" />
          <Sessions />
        </>
      )}
    </Stack>
  );
}

function DetailsForm({ profile }: { profile: ProfileData }) {
  const queryClient = useQueryClient();
  const guard = useUnsavedGuard();
  const { operator } = profile;
  const [form, setForm] = useState({
    name: operator.name,
    timezone: operator.timezone,
    email: operator.email,
    current_password: '',
  });
  // The password is asked for only when the sign-in email changes.
  const emailChanged = form.email.trim().toLowerCase() !== operator.email;
  const [errors, setErrors] = useState(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  const set = (patch: Partial<typeof form>) => {
    guard.markDirty();
    setSaved(false);
    setForm((f) => ({ ...f, ...patch }));
  };

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    try {
      const { email, current_password, ...rest } = form;
      const r = await api.PATCH('/api/profile', {
        body: emailChanged ? { ...rest, email: email.trim(), current_password } : rest,
      });
      if (r.error) {
        const p = r.error as Problem;
        setErrors(
          fieldErrors(p.errors, {
            name: 'Name',
            timezone: 'Time zone',
            email: 'Email',
            current_password: 'Current password',
          }),
        );
        setProblem(refusal(p, 'profile'));
        return;
      }
      setErrors(noErrors);
      setProblem(null);
      guard.markClean();
      setForm((f) => ({ ...f, email: r.data.operator.email, current_password: '' }));
      queryClient.setQueryData(['profile'], r.data);
      // The header shows the name from whoami.
      await queryClient.invalidateQueries({ queryKey: ['whoami'] });
      setSaved(true);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <form onSubmit={save}>
      <Stack>
        {saved && (
          <Alert color="green" data-testid="profile-saved">
            Saved.
          </Alert>
        )}
        {problem && <Alert color="red" role="alert" title={problem} data-testid="profile-errors" />}
        <TextInput
          label="Name"
          value={form.name}
          onChange={(e) => set({ name: e.currentTarget.value })}
          error={errors.at('name')}
        />
        <TextInput
          label="Email"
          type="email"
          autoComplete="email"
          value={form.email}
          onChange={(e) => set({ email: e.currentTarget.value })}
          error={errors.at('email')}
          description="Your sign-in"
        />
        {emailChanged && (
          <PasswordInput
            label="Current password"
            description="Needed to change your email"
            autoComplete="current-password"
            value={form.current_password}
            onChange={(e) => set({ current_password: e.currentTarget.value })}
            error={errors.at('current_password')}
            aria-invalid={Boolean(errors.at('current_password'))}
          />
        )}
        <TimezoneSelect
          value={form.timezone}
          onChange={(timezone) => set({ timezone })}
          error={errors.at('timezone')}
        />
        <Group gap="xs">
          <Text size="sm" c="dimmed">
            Role:
          </Text>
          <Badge variant="light">{operator.role_name}</Badge>
        </Group>
        <Group>
          <Button type="submit" loading={saving}>
            Save profile
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

// Mantine's PasswordInput leaves aria-invalid off its input (TextInput sets it), so screen
// readers are told here.
function PasswordForm() {
  const empty = { current_password: '', new_password: '' };
  const [form, setForm] = useState(empty);
  const [errors, setErrors] = useState(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [changed, setChanged] = useState(false);
  const [saving, setSaving] = useState(false);

  async function change(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setChanged(false);
    try {
      const r = await api.POST('/api/profile/password', { body: form });
      if (r.error) {
        const p = r.error as Problem;
        setErrors(fieldErrors(p.errors, { current_password: 'Current password', new_password: 'New password' }));
        setProblem(refusal(p, 'password'));
        return;
      }
      setErrors(noErrors);
      setProblem(null);
      setForm(empty);
      setChanged(true);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <form onSubmit={change}>
      <Stack>
        <Title order={2} size="h3">
          Password
        </Title>
        <Text size="sm" c="dimmed">
          Changing it signs you out everywhere else; this session stays.
        </Text>
        {changed && (
          <Alert color="green" data-testid="password-changed">
            Password changed. Your other sessions have ended.
          </Alert>
        )}
        {problem && <Alert color="red" role="alert" title={problem} data-testid="password-errors" />}
        <PasswordInput
          label="Current password"
          autoComplete="current-password"
          value={form.current_password}
          onChange={(e) => setForm({ ...form, current_password: e.currentTarget.value })}
          error={errors.at('current_password')}
          aria-invalid={Boolean(errors.at('current_password'))}
        />
        <PasswordInput
          label="New password"
          description="At least 10 characters"
          autoComplete="new-password"
          value={form.new_password}
          onChange={(e) => setForm({ ...form, new_password: e.currentTarget.value })}
          error={errors.at('new_password')}
          aria-invalid={Boolean(errors.at('new_password'))}
        />
        <Group>
          <Button type="submit" variant="default" loading={saving}>
            Change password
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
