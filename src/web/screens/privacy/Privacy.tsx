import { Alert, Badge, Button, Checkbox, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { usePagedList } from '../../ui/ListPage';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { Retention } from './Retention';

type Receipt = paths['/api/privacy/erasures']['post']['responses'][201]['content']['application/json'];

const PAGE = 20;

/** /settings/privacy (admins, sessions): erase a contact, the receipts, retention (Retention.tsx), and who viewed contacts. */
export default function Privacy() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Privacy
      </Title>
      <EraseForm />
      <Erasures />
      <Retention />
      <ContactViews />
    </Stack>
  );
}

function EraseForm() {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [phone, setPhone] = useState('');
  const [note, setNote] = useState('');
  const [blocklist, setBlocklist] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [receipt, setReceipt] = useState<Receipt | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setConfirming(true);
  };
  return (
    <Stack maw={640} component="section" aria-labelledby="erase-title">
      <Title order={2} size="h4" id="erase-title">
        Erase a contact
      </Title>
      <Text size="sm" c="dimmed">
        Every lead with this email or phone keeps its row but loses its names, contacts and IP; every other place the
        contacts were stored is scrubbed. This cannot be undone.
      </Text>
      <form onSubmit={submit}>
        <Stack gap="sm">
          <TextInput label="Email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} maxLength={320} />
          <TextInput
            label="Phone (international format)"
            value={phone}
            onChange={(e) => setPhone(e.currentTarget.value)}
            maxLength={40}
          />
          <TextInput label="Note" value={note} onChange={(e) => setNote(e.currentTarget.value)} maxLength={1000} />
          <Checkbox
            label="Also block these contacts (stored only as a digest)"
            checked={blocklist}
            onChange={(e) => setBlocklist(e.currentTarget.checked)}
          />
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Group>
            <Button type="submit" color="red" disabled={!email.trim() && !phone.trim()} data-testid="erase-submit">
              Erase…
            </Button>
          </Group>
        </Stack>
      </form>
      {receipt && (
        <Alert color="green" data-testid="erase-receipt">
          Erased {receipt.counts.leads ?? 0} lead(s) of {receipt.subject}; receipt <Code>{receipt.id}</Code>.
        </Alert>
      )}
      <ConfirmDialog
        opened={confirming}
        title="Erase this contact?"
        confirmLabel="Erase"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          const res = await api.POST('/api/privacy/erasures', {
            body: {
              ...(email.trim() ? { email } : {}),
              ...(phone.trim() ? { phone } : {}),
              ...(note.trim() ? { note } : {}),
              blocklist,
            },
          });
          setConfirming(false);
          if (res.error) return setError(problemText(res.error as Problem));
          setReceipt(res.data);
          setEmail('');
          setPhone('');
          setNote('');
          await queryClient.invalidateQueries({ queryKey: ['privacy-erasures'] });
        }}
      >
        <Text>The leads carrying it are erased for good.</Text>
      </ConfirmDialog>
    </Stack>
  );
}

function Erasures() {
  const clock = useClock();
  const list = usePagedList(['privacy-erasures'], async (cursor) =>
    must(await api.GET('/api/privacy/erasures', { params: { query: { limit: PAGE, cursor } } })),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack component="section" aria-labelledby="erasures-title">
      <Title order={2} size="h4" id="erasures-title">
        Erasures
      </Title>
      {list.isError && (
        <Alert color="red" role="alert">
          {problemText(list.error)}
        </Alert>
      )}
      {list.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Text size="sm">No erasures yet.</Text>
      ) : (
        <TableBox minWidth={640}>
          <Table data-testid="erasures-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time ({clock.zone})</Table.Th>
                <Table.Th>Subject</Table.Th>
                <Table.Th>Leads</Table.Th>
                <Table.Th visibleFrom="sm">By</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>{clock.dateTime(r.created_at)}</Table.Td>
                  <Table.Td>{r.subject}</Table.Td>
                  <Table.Td>{r.lead_ids.length}</Table.Td>
                  <Table.Td visibleFrom="sm">{r.created_by_email ?? '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {list.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => list.fetchNextPage()} loading={list.isFetchingNextPage}>
            Load more
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function ContactViews() {
  const clock = useClock();
  const list = usePagedList(['privacy-contact-views'], async (cursor) =>
    must(await api.GET('/api/privacy/contact-views', { params: { query: { limit: PAGE, cursor } } })),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Stack component="section" aria-labelledby="views-title">
      <Title order={2} size="h4" id="views-title">
        Who viewed contacts
      </Title>
      <Text size="sm" c="dimmed">
        Each lead opened or export made with contacts unmasked, kept 400 days.
      </Text>
      {list.isError && (
        <Alert color="red" role="alert">
          {problemText(list.error)}
        </Alert>
      )}
      {list.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Text size="sm">No contacts viewed yet.</Text>
      ) : (
        <TableBox minWidth={720}>
          <Table data-testid="contact-views-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time ({clock.zone})</Table.Th>
                <Table.Th>Operator</Table.Th>
                <Table.Th>What</Table.Th>
                <Table.Th visibleFrom="sm">IP</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>{clock.dateTime(r.at)}</Table.Td>
                  <Table.Td>
                    <Group gap={6}>
                      <Text size="sm">{r.operator_email}</Text>
                      <Badge size="xs" variant="light" color={r.via === 'session' ? 'blue' : 'grape'}>
                        {r.via === 'session' ? 'dashboard' : 'API key'}
                      </Badge>
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    {r.kind === 'lead' ? (
                      <Text size="sm" ff="monospace">
                        lead {r.lead_id}
                      </Text>
                    ) : (
                      <Text size="sm">export {JSON.stringify(r.export_filter ?? {})}</Text>
                    )}
                  </Table.Td>
                  <Table.Td visibleFrom="sm">
                    <Text size="sm" ff="monospace">
                      {r.ip ?? '—'}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {list.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => list.fetchNextPage()} loading={list.isFetchingNextPage}>
            Load more
          </Button>
        </Group>
      )}
    </Stack>
  );
}
