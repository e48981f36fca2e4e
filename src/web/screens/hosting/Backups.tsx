import { Alert, Anchor, Button, Card, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorAlert } from '../../ui/EditorPage';
import { useClock } from '../../ui/useClock';
import { formatBytes, HOSTING_KEY } from './shared';
import { saveBlob } from '../../ui/download';

const KEY = ['hosting', 'backups'];

/** SQLite backups: make one now, download, delete. */
export function Backups({ advice, canEdit }: { advice: string; canEdit: boolean }) {
  const clock = useClock();
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: KEY,
    queryFn: async () => must(await api.GET('/api/hosting/backups', { params: { query: { limit: 500 } } })),
  });
  const [deleting, setDeleting] = useState<string | null>(null);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: HOSTING_KEY }); // the list and the database size
  const make = useMutation({
    mutationFn: async () => must(await api.POST('/api/hosting/backups')),
    onSuccess: refresh,
  });

  // The download needs the session's Bearer token, so a plain link cannot fetch it: fetch the
  // file and hand the browser a blob to save.
  async function download(name: string) {
    setDownloadError(null);
    try {
      const res = await api.GET('/api/hosting/backups/{name}', { params: { path: { name } }, parseAs: 'blob' });
      if (res.error !== undefined || !res.data) throw new Error(problemText(res.error));
      saveBlob(res.data as Blob, name);
    } catch (err) {
      setDownloadError(problemText(err));
    }
  }

  return (
    <Card withBorder>
      <Stack>
        <Group justify="space-between">
          <Title order={2} size="h4">
            Backups
          </Title>
          <Button onClick={() => make.mutate()} loading={make.isPending} disabled={!canEdit}>
            Back up now
          </Button>
        </Group>
        <Text size="sm">{advice}</Text>
        {make.isError && (
          <Alert color="red" role="alert">
            {problemText(make.error)}
          </Alert>
        )}
        {make.isSuccess && (
          <Alert color="green" data-testid="backup-made">
            Backup <Code>{make.data.name}</Code> made ({formatBytes(make.data.size_bytes)}).
          </Alert>
        )}
        {downloadError && (
          <Alert color="red" role="alert">
            {downloadError}
          </Alert>
        )}
        {list.isPending ? (
          <Loading />
        ) : list.isError ? (
          <ErrorAlert error={list.error} />
        ) : list.data.data.length === 0 ? (
          <Text c="dimmed" data-testid="backups-empty">
            No backups yet.
          </Text>
        ) : (
          <Table data-testid="backups">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>File</Table.Th>
                <Table.Th>Made ({clock.zone})</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.data.map((b) => (
                <Table.Tr key={b.name} data-testid="backup-row">
                  <Table.Td>
                    <Anchor component="button" type="button" ff="monospace" size="sm" onClick={() => download(b.name)}>
                      {b.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{clock.dateTime(b.created_at)}</Table.Td>
                  <Table.Td>{formatBytes(b.size_bytes)}</Table.Td>
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      disabled={!canEdit}
                      onClick={() => setDeleting(b.name)}
                    >
                      Delete
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      <ConfirmDialog
        opened={deleting !== null}
        title="Delete this backup?"
        confirmLabel="Delete backup"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          must(await api.DELETE('/api/hosting/backups/{name}', { params: { path: { name: deleting! } } }));
          await refresh();
          setDeleting(null);
        }}
      >
        <Text size="sm">
          <Code>{deleting}</Code> will be removed from the server. Keep a downloaded copy if you may need it.
        </Text>
      </ConfirmDialog>
    </Card>
  );
}
