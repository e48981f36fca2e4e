import { Alert, Badge, Button, Group, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ShownOnce } from '../../ui/ShownOnce';
import { usePagedList } from '../../ui/ListPage';
import { LocalLinkNote } from '../../ui/LocalLinkNote';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { UserKeys } from './UserKeys';

type User =
  paths['/api/traffic-providers/{id}/users']['get']['responses'][200]['content']['application/json']['data'][number];
type Invited = paths['/api/traffic-providers/{id}/users']['post']['responses'][201]['content']['application/json'];

const STATUS_COLOR = { invited: 'yellow', active: 'green', disabled: 'gray' } as const;

/** The provider's portal users: invite one (the link shown once), disable or enable, renew an invitation, their keys. */
export function PortalUsers({ providerId, canEdit }: { providerId: string; canEdit: boolean }) {
  const queryClient = useQueryClient();
  const clock = useClock();
  const queryKey = ['provider-users', providerId];
  const users = usePagedList(queryKey, async (cursor) =>
    must(
      await api.GET('/api/traffic-providers/{id}/users', {
        params: { path: { id: providerId }, query: { limit: 100, cursor } },
      }),
    ),
  );
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [shown, setShown] = useState<Invited | null>(null);
  const [keysOf, setKeysOf] = useState<User | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey });

  const invite = useMutation({
    mutationFn: async () =>
      must(
        await api.POST('/api/traffic-providers/{id}/users', {
          params: { path: { id: providerId } },
          body: { email: email.trim(), ...(name.trim() ? { name: name.trim() } : {}) },
        }),
        { email: 'Email', name: 'Name' },
      ),
    onSuccess: async (u) => {
      setShown(u);
      setEmail('');
      setName('');
      await refresh();
    },
  });
  const act = useMutation({
    mutationFn: async ({ user, what }: { user: User; what: 'disable' | 'enable' | 'renew' }) => {
      const path = { id: providerId, user_id: user.id };
      if (what === 'renew')
        setShown(must(await api.POST('/api/traffic-providers/{id}/users/{user_id}/invitation', { params: { path } })));
      else
        must(
          await api.PATCH('/api/traffic-providers/{id}/users/{user_id}', {
            params: { path },
            body: { status: what === 'disable' ? 'disabled' : 'active' },
          }),
        );
    },
    onSettled: refresh,
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    invite.mutate();
  }

  const rows = users.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack gap="sm">
      <Title order={3} size="h5">
        Users
      </Title>
      {canEdit && (
        <form onSubmit={submit}>
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label="Email"
              type="email"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              w={{ base: '100%', sm: 260 }}
            />
            <TextInput
              label="Name (optional)"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              w={{ base: '100%', sm: 200 }}
            />
            <Button type="submit" loading={invite.isPending}>
              Invite
            </Button>
          </Group>
        </form>
      )}
      {[invite, act].map(
        (m, i) =>
          m.isError && (
            <Alert key={i} color="red" role="alert">
              {problemText(m.error)}
            </Alert>
          ),
      )}
      {users.isError && (
        <Alert color="red" role="alert">
          {problemText(users.error)}
        </Alert>
      )}
      {users.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Text size="sm" data-testid="portal-users-empty">
          No one has access to this provider&apos;s portal yet.
        </Text>
      ) : (
        <TableBox minWidth={760}>
          <Table striped data-testid="portal-users">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>User</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th visibleFrom="sm">Last sign-in ({clock.zone})</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((u) => (
                <Table.Tr key={u.id} data-testid="portal-user-row">
                  <Table.Td style={{ wordBreak: 'break-all' }}>
                    <Text size="sm" fw={500}>
                      {u.email}
                    </Text>
                    {u.name && u.name !== u.email && (
                      <Text size="xs" c="dimmed">
                        {u.name}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLOR[u.status]} data-testid="portal-user-status">
                      {u.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td visibleFrom="sm">{clock.dateTime(u.last_login_at)}</Table.Td>
                  <Table.Td>
                    <Group gap="xs" justify="flex-end">
                      <Button size="xs" variant="default" onClick={() => setKeysOf(u)}>
                        Keys
                      </Button>
                      {canEdit && u.status === 'invited' && (
                        <Button size="xs" variant="light" onClick={() => act.mutate({ user: u, what: 'renew' })}>
                          Renew invitation
                        </Button>
                      )}
                      {canEdit && (
                        <Button
                          size="xs"
                          variant="light"
                          color={u.status === 'disabled' ? undefined : 'red'}
                          onClick={() => act.mutate({ user: u, what: u.status === 'disabled' ? 'enable' : 'disable' })}
                        >
                          {u.status === 'disabled' ? 'Enable' : 'Disable'}
                        </Button>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      <InvitationModal shown={shown} onClose={() => setShown(null)} />
      <UserKeys providerId={providerId} user={keysOf} canEdit={canEdit} onClose={() => setKeysOf(null)} />
    </Stack>
  );
}

/** Whether the server mailed the link too (when the host set up a mail server). */
function MailNote({ mail }: { mail: Invited['mail'] }) {
  const text =
    mail.status === 'sent'
      ? `Mailed to ${mail.to}.`
      : mail.status === 'failed'
        ? `Not mailed: ${mail.error ?? 'the mail server did not take it'}`
        : 'Not mailed: no mail server is set up on this server (SMTP_URL). Hand the link over yourself.';
  return (
    <Alert
      color={mail.status === 'sent' ? 'green' : mail.status === 'failed' ? 'red' : 'gray'}
      data-testid="invitation-mail"
      style={{ wordBreak: 'break-word' }}
    >
      {text}
    </Alert>
  );
}

/** The invitation link, shown once: the operator hands it to the provider user. */
function InvitationModal({ shown, onClose }: { shown: Invited | null; onClose: () => void }) {
  const clock = useClock();
  const link = shown ? new URL(shown.invitation_url, window.location.origin).href : '';
  return (
    <Modal opened={shown !== null} onClose={onClose} title="Invitation link" size="lg" closeOnClickOutside={false}>
      {shown && (
        <ShownOnce
          title="Copy this link now"
          message={`This is the only time the invitation link for ${shown.email} is shown. Hand it over on a safe channel; it works once, until ${clock.dateTime(shown.invitation_expires_at)} (${clock.zone}). If it is lost, renew the invitation.`}
          value={link}
          testId="invitation-link"
          onDone={onClose}
        >
          <MailNote mail={shown.mail} />
          <LocalLinkNote link={shown.invitation_url} who="the provider user" remake="renew the invitation" />
        </ShownOnce>
      )}
    </Modal>
  );
}
