import { Alert, Badge, Button, FileInput, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { TableBox } from '../../ui/TableBox';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { ImportPanel, STATE_COLORS } from './ImportPanel';
import { uploadCsv } from './uploadCsv';

/**
 * Leads → Import: upload a CSV (with its upload's progress), map its columns, dry run it (its
 * bad rows by row number), import it (its progress, Cancel), and the imports made before.
 */
export default function Imports() {
  const clock = useClock();
  const [current, setCurrent] = useState<{ id: string; suggested: Record<string, string> | null } | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const list = useQuery({
    queryKey: ['imports'],
    queryFn: async () => must(await api.GET('/api/imports', { params: { query: { limit: 50 } } })),
    refetchInterval: 3000,
  });
  const upload = useMutation({
    mutationFn: (file: File) => uploadCsv(file, setSent),
    onSuccess: (imp) => {
      setCurrent({ id: imp.id, suggested: imp.suggested_mapping });
      void list.refetch();
    },
    onSettled: () => setSent(null),
  });
  return (
    <Stack gap="sm">
      <Title order={1} size="h2">
        Import leads
      </Title>
      <Text c="dimmed" size="sm">
        A CSV file with a header row (UTF-8, comma or semicolon). Its rows are checked by the same rules as intake.
      </Text>
      <FileInput
        label="CSV file"
        accept=".csv,text/csv"
        onChange={(file) => file && upload.mutate(file)}
        disabled={upload.isPending}
      />
      {sent !== null && <Progress value={sent} aria-label="Upload progress" data-testid="upload-progress" />}
      {upload.isError && (
        <Alert color="red" role="alert">
          {problemText(upload.error)}
        </Alert>
      )}
      {current && <ImportPanel key={current.id} id={current.id} suggested={current.suggested} />}
      <Title order={2} size="h3">
        Imports
      </Title>
      <ZoneNote />
      {list.isError && (
        <Alert color="red" role="alert">
          {problemText(list.error)}
        </Alert>
      )}
      {list.isPending ? (
        <Loading />
      ) : !list.data?.data.length ? (
        <Text>No imports yet.</Text>
      ) : (
        <TableBox minWidth={640}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th visibleFrom="sm">Uploaded</Table.Th>
                <Table.Th>File</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th visibleFrom="sm">Rows</Table.Th>
                <Table.Th>Open</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.data.map((imp) => (
                <Table.Tr key={imp.id} data-testid="import-row">
                  <Table.Td visibleFrom="sm">{clock.dateTime(imp.created_at)}</Table.Td>
                  <Table.Td>{imp.name ?? imp.id}</Table.Td>
                  <Table.Td>
                    <Badge color={STATE_COLORS[imp.state]}>{imp.state}</Badge>
                  </Table.Td>
                  <Table.Td visibleFrom="sm">
                    {imp.rows.toLocaleString()} ({imp.counts.imported.toLocaleString()} imported)
                  </Table.Td>
                  <Table.Td>
                    <Button
                      size="compact-sm"
                      variant="default"
                      onClick={() => setCurrent({ id: imp.id, suggested: null })}
                      aria-label={`Open ${imp.name ?? imp.id}`}
                    >
                      Open
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
    </Stack>
  );
}
