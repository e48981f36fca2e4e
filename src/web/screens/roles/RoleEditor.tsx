import { Alert, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router-dom';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage, ErrorAlert } from '../../ui/EditorPage';
import { fieldErrors } from '../../ui/fields';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import { PermissionGrid } from './PermissionGrid';
import { ScopePickers } from './ScopePickers';
import { EditorHeader } from '../../ui/EditorHeader';

type Role = paths['/api/roles/{id}']['get']['responses'][200]['content']['application/json'];
// The grid only offers what GET /api/permissions lists, which is exactly this vocabulary.
type Permission = paths['/api/roles']['post']['requestBody']['content']['application/json']['permissions'][number];

/** /settings/roles/new makes a role; /settings/roles/:id edits one. */
export default function RoleEditor() {
  return (
    <EditorPage
      queryKey="role"
      load={async (id) => must(await api.GET('/api/roles/{id}', { params: { path: { id } } }))}
      back={{ to: '/settings/roles', label: 'All roles' }}
    >
      {(role, id) => <RoleForm key={id} role={role} />}
    </EditorPage>
  );
}

function RoleForm({ role }: { role: Role | null }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const catalog = useQuery({ queryKey: ['permissions'], queryFn: async () => must(await api.GET('/api/permissions')) });
  const { form, set, errors, problem, saved, saving, guard, submit, savedAs } = useEditorForm(() => ({
    name: role?.name ?? '',
    description: role?.description ?? '',
    permissions: role?.permissions ?? [],
    scope: role?.scope ?? { traffic_provider_ids: null, partner_ids: null },
  }));

  const held = new Set(whoami.data?.permissions ?? []);
  const mayEdit = held.has('roles:edit');
  // The API refuses changes to a role holding more than the editor does, so those are read-only.
  const beyond = (role?.permissions ?? []).filter((p) => !held.has(p));
  const builtin = role?.builtin ?? false;
  const canEdit = mayEdit && !builtin && beyond.length === 0;

  function save() {
    const body = { ...form, permissions: form.permissions as Permission[] };
    return submit(
      () =>
        role
          ? api.PATCH('/api/roles/{id}', { params: { path: { id: role.id } }, body })
          : api.POST('/api/roles', { body }),
      (p) => ({
        errors: fieldErrors(p.errors, {
          name: 'Name',
          description: 'Description',
          permissions: 'Permissions',
          'scope.traffic_provider_ids': 'Traffic providers',
          'scope.partner_ids': 'Partners',
        }),
        problem: refusal(p, 'role'),
      }),
      async (stored) => {
        queryClient.setQueryData(['role', stored.id], stored);
        await queryClient.invalidateQueries({ queryKey: ['roles'] });
        // The server's version: a trimmed name, permissions in its order.
        if (role)
          savedAs({
            name: stored.name,
            description: stored.description,
            permissions: stored.permissions,
            scope: stored.scope,
          });
        else navigate(`/settings/roles/${stored.id}`, { replace: true, state: { saved: true } });
      },
    );
  }

  return (
    <Stack>
      <EditorHeader
        title={role ? role.name : 'New role'}
        testId="role"
        actions={
          <>
            {role && !builtin && (
              <DeleteButton
                what="role"
                name={role.name}
                remove={() => api.DELETE('/api/roles/{id}', { params: { path: { id: role.id } } })}
                list={{ to: '/settings/roles', queryKey: 'roles' }}
                onDeleted={guard.markClean}
                disabled={!canEdit}
                note={'A role can only be deleted when no operator holds it.'}
              />
            )}
          </>
        }
        onSave={save}
        saving={saving}
        canEdit={canEdit}
        saved={saved}
        savedText="Saved. Operators holding this role get the change on their next request."
        problem={problem}
      >
        {builtin && (
          <Alert color="gray">The built-in admin role holds every permission and cannot be changed or deleted.</Alert>
        )}
        {whoami.data && !mayEdit && <Alert color="yellow">You can view roles but not change them.</Alert>}
        {mayEdit && beyond.length > 0 && !builtin && (
          <Alert color="yellow">
            This role holds permissions you do not ({beyond.join(', ')}), so you cannot change it.
          </Alert>
        )}
      </EditorHeader>
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack maw={720}>
          <TextInput
            label="Name"
            value={form.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={errors.at('name')}
          />
          <Textarea
            label="Description"
            autosize
            minRows={2}
            value={form.description}
            onChange={(e) => set({ description: e.currentTarget.value })}
            error={errors.at('description')}
          />
          <Title order={2} size="h4">
            Permissions
          </Title>
          <Text size="sm" c="dimmed">
            View lets the role read a module; edit lets it create, change and delete there. A module's or an action's
            own box ticks its whole row or column. You can only grant permissions you hold yourself.
          </Text>
          {catalog.isPending ? (
            <Loading />
          ) : catalog.isError ? (
            <ErrorAlert error={catalog.error} />
          ) : (
            <PermissionGrid
              catalog={catalog.data}
              value={form.permissions}
              onChange={(permissions) => set({ permissions })}
              held={held}
              readOnly={!canEdit}
              error={errors.at('permissions')}
            />
          )}
          {!builtin && (
            <ScopePickers
              value={form.scope}
              onChange={(scope) => set({ scope })}
              held={held}
              readOnly={!canEdit}
              errorAt={errors.at}
            />
          )}
        </Stack>
      </fieldset>
    </Stack>
  );
}
