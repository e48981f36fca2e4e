import { Alert, PasswordInput, SegmentedControl, Select, Stack, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { TwoFactorReset } from './TwoFactorReset';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage } from '../../ui/EditorPage';
import { fieldErrors } from '../../ui/fields';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import { TimezoneSelect } from '../../ui/inputs';
import { EditorHeader } from '../../ui/EditorHeader';
import { browserZone } from '../../ui/clock';

type Operator = paths['/api/operators/{id}']['get']['responses'][200]['content']['application/json'];
type Status = Operator['status'];

/**
 * Every role, each marked grantable or not: the API refuses a role holding more than the caller,
 * and the admin role to anyone but an admin.
 */
async function roleOptions(held: ReadonlySet<string>, admin: boolean) {
  const out: { value: string; label: string; disabled: boolean }[] = [];
  let cursor: string | undefined;
  do {
    const page = must(await api.GET('/api/roles', { params: { query: { limit: 100, cursor } } }));
    for (const r of page.data) {
      const grantable = r.builtin ? admin : r.permissions.every((p) => held.has(p));
      const why = r.builtin ? 'only an admin can give it' : 'holds permissions you do not';
      out.push({ value: r.id, label: grantable ? r.name : `${r.name} (${why})`, disabled: !grantable });
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

/** /settings/operators/new adds an operator; /settings/operators/:id edits one. */
export default function OperatorEditor() {
  return (
    <EditorPage
      queryKey="operator"
      load={async (id) => must(await api.GET('/api/operators/{id}', { params: { path: { id } } }))}
      back={{ to: '/settings/operators', label: 'All operators' }}
    >
      {(operator, id) => <OperatorForm key={id} operator={operator} />}
    </EditorPage>
  );
}

function OperatorForm({ operator }: { operator: Operator | null }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const held = new Set(whoami.data?.permissions ?? []);
  const mayViewRoles = held.has('roles:view');
  const isAdmin = whoami.data?.admin ?? false;
  const roles = useQuery({
    queryKey: ['roles', 'options', isAdmin, [...held].sort()],
    enabled: mayViewRoles,
    queryFn: () => roleOptions(held, isAdmin),
  });
  const { form, set, errors, problem, saved, saving, guard, submit, savedAs } = useEditorForm(() => ({
    name: operator?.name ?? '',
    email: operator?.email ?? '',
    role_id: operator?.role_id ?? '',
    timezone: operator?.timezone ?? browserZone(),
    status: operator?.status ?? ('active' as Status),
    password: '',
    current_password: '',
  }));

  // An admin is changed only by an admin (the server says so too; here the form says why first).
  const targetIsAdmin = operator?.admin === true;
  const canEdit = held.has('operators:edit') && !(targetIsAdmin && !isAdmin);
  const self = operator !== null && operator.id === whoami.data?.operator.id;
  // Without roles:view the roles cannot be listed; the current one is still shown by name.
  const roleData =
    roles.data ?? (operator ? [{ value: operator.role_id, label: operator.role_name, disabled: false }] : []);

  // Creating an operator, setting their password or changing their email is for a person: the API
  // asks for your own password.
  const needsYourPassword =
    operator === null || form.password !== '' || form.email.trim().toLowerCase() !== operator.email;

  function save() {
    const { password, current_password, ...rest } = form;
    return submit(
      // On an edit an empty password means "keep the current one"; on creation the API asks for one.
      () =>
        operator
          ? api.PATCH('/api/operators/{id}', {
              params: { path: { id: operator.id } },
              body: { ...rest, ...(password ? { password } : {}), ...(needsYourPassword ? { current_password } : {}) },
            })
          : api.POST('/api/operators', { body: { ...rest, password, current_password } }),
      (p) => ({
        errors: fieldErrors(p.errors, {
          name: 'Name',
          email: 'Email',
          role_id: 'Role',
          timezone: 'Time zone',
          status: 'Status',
          password: operator ? 'New password' : 'Initial password',
          current_password: 'Your current password',
        }),
        problem: refusal(p, 'operator'),
      }),
      async (stored) => {
        queryClient.setQueryData(['operator', stored.id], stored);
        await queryClient.invalidateQueries({ queryKey: ['operators'] });
        // The server's version (the email lower-cased, the name trimmed); the password is not kept.
        const { name, email, role_id, timezone, status } = stored;
        if (operator) savedAs({ name, email, role_id, timezone, status, password: '', current_password: '' });
        else navigate(`/settings/operators/${stored.id}`, { replace: true, state: { saved: true } });
      },
    );
  }

  return (
    <Stack>
      <EditorHeader
        title={operator ? operator.name : 'New operator'}
        testId="operator"
        actions={
          <>
            {operator && (
              <DeleteButton
                what="operator"
                name={operator.name}
                remove={() => api.DELETE('/api/operators/{id}', { params: { path: { id: operator.id } } })}
                list={{ to: '/settings/operators', queryKey: 'operators' }}
                onDeleted={guard.markClean}
                disabled={!canEdit || self}
                title={self ? 'You cannot delete yourself' : undefined}
                note={`Their sessions end and their API keys are deleted with them. To stop them only for a while, disable them instead.`}
              />
            )}
          </>
        }
        onSave={save}
        saving={saving}
        canEdit={canEdit}
        saved={saved}
        problem={problem}
      >
        {whoami.data && !canEdit && (
          <Alert color="yellow">
            {targetIsAdmin && !isAdmin
              ? 'Only an admin can change an admin.'
              : 'You can view operators but not change them.'}
          </Alert>
        )}
      </EditorHeader>
      {roles.isError && <Alert color="red">Roles could not be loaded: {problemText(roles.error)}</Alert>}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack maw={520}>
          <TextInput
            label="Name"
            value={form.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={errors.at('name')}
          />
          <TextInput
            label="Email"
            type="email"
            value={form.email}
            onChange={(e) => set({ email: e.currentTarget.value })}
            error={errors.at('email')}
          />
          <Select
            label="Role"
            description={
              self
                ? 'You cannot change your own role; ask another operator.'
                : mayViewRoles
                  ? 'You can only give a role whose permissions you hold yourself.'
                  : 'Listing roles needs the roles:view permission.'
            }
            placeholder={roles.isLoading ? 'Loading roles…' : 'Pick a role'}
            data={roleData}
            value={form.role_id || null}
            onChange={(v) => set({ role_id: v ?? '' })}
            disabled={!canEdit || self || !mayViewRoles}
            error={errors.at('role_id')}
            allowDeselect={false}
          />
          <TimezoneSelect
            value={form.timezone}
            onChange={(timezone) => set({ timezone })}
            error={errors.at('timezone')}
            description="Dates on their screens are shown in it"
          />
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Status
            </Text>
            <SegmentedControl
              aria-label="Status"
              value={form.status}
              onChange={(v) => set({ status: v as Status })}
              disabled={!canEdit || self}
              data={[
                { value: 'active', label: 'Active' },
                { value: 'disabled', label: 'Disabled (cannot sign in)' },
              ]}
            />
            <Text size="xs" c={errors.at('status') ? 'red' : 'dimmed'}>
              {errors.at('status') ??
                (self
                  ? 'You cannot change your own status.'
                  : 'Disabling ends their sessions and stops their API keys until they are enabled again.')}
            </Text>
          </Stack>
          <PasswordInput
            label={operator ? 'New password' : 'Initial password'}
            description={
              operator
                ? 'Leave empty to keep the current one. Setting one signs them out everywhere.'
                : 'At least 10 characters. Give it to them privately; they can change it in their profile.'
            }
            autoComplete="new-password"
            value={form.password}
            onChange={(e) => set({ password: e.currentTarget.value })}
            error={errors.at('password')}
          />
          {needsYourPassword && (
            <PasswordInput
              label="Your current password"
              description={
                operator
                  ? 'Setting their password or changing their email needs your own password.'
                  : 'Adding an operator needs your own password.'
              }
              autoComplete="current-password"
              value={form.current_password}
              onChange={(e) => set({ current_password: e.currentTarget.value })}
              error={errors.at('current_password')}
            />
          )}
        </Stack>
      </fieldset>
      {operator && <TwoFactorReset operator={operator} canEdit={canEdit} self={self} />}
    </Stack>
  );
}
