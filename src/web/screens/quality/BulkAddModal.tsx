import {
  Alert,
  Button,
  Code,
  FileInput,
  Group,
  List,
  Modal,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { useClock } from '../../ui/useClock';
import { expiryOf, KIND_OPTIONS, LIST_KEY, useProviderChoice, type Kind } from './entries';
import { ProviderSelect } from './EntryForm';

type Result = paths['/api/blocklists/import']['post']['responses'][200]['content']['application/json'];

/** "row 3 value" → "Row 3, value"; "header" → "Header". */
const fieldText = (field: string) =>
  field
    .replace(/^row (\d+) (.+)$/, 'Row $1, $2')
    .replace(/_/g, ' ')
    .replace(/^./, (c) => c.toUpperCase());

/**
 * Bulk add: a CSV file posted as it is (text/csv) to POST /api/blocklists/import, with the kind,
 * provider and expiry of the rows that name none. All or nothing: the answer is the counts, or the
 * bad rows by number (nothing was added then).
 */
export function BulkAddModal({ onClose }: { onClose: () => void }) {
  const clock = useClock();
  const queryClient = useQueryClient();
  const providers = useProviderChoice();
  const [file, setFile] = useState<File | null>(null);
  const [kind, setKind] = useState<Kind | null>(null);
  const [provider, setProvider] = useState<string | null>(null);
  const [expires, setExpires] = useState('');
  const [result, setResult] = useState<Result | null>(null);
  const [rowErrors, setRowErrors] = useState<{ field: string; message: string }[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const providerId = provider ?? (providers.global ? null : (providers.options[0]?.value ?? null));

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!file) return;
    setSending(true);
    setResult(null);
    setRowErrors([]);
    setProblem(null);
    try {
      const expiresAt = expiryOf(expires, clock.zone);
      const r = await api.POST('/api/blocklists/import', {
        params: {
          query: {
            ...(kind && { kind }),
            ...(providerId && { traffic_provider_id: providerId }),
            ...(expiresAt && { expires_at: expiresAt }),
          },
        },
        body: file,
        // The file goes as it is: no JSON around it.
        bodySerializer: (b) => b as File,
        headers: { 'Content-Type': 'text/csv' },
      });
      if (r.error !== undefined) {
        const p = r.error as Problem;
        setRowErrors(p.errors ?? []);
        setProblem(p.errors?.length ? 'Nothing was added: the file has these errors.' : problemText(p));
        return;
      }
      setResult(r.data);
      await queryClient.invalidateQueries({ queryKey: [LIST_KEY] });
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSending(false);
    }
  }

  return (
    <Modal opened onClose={onClose} title="Bulk add (CSV)" size="lg">
      <form onSubmit={submit} aria-label="Bulk add blocklist entries">
        <Stack gap="sm">
          <Text size="sm">
            A CSV file (UTF-8, comma or semicolon) with a header row: a <Code>value</Code> column and optionally{' '}
            <Code>kind</Code>, <Code>traffic_provider_id</Code>, <Code>expires_at</Code> (2027-01-31 or
            2027-01-31T18:00:00Z) and <Code>note</Code>. The choices below apply to the rows that name none. All or
            nothing: one bad row and no entry is added.
          </Text>
          <FileInput
            label="CSV file"
            accept=".csv,text/csv"
            value={file}
            onChange={(f) => {
              setFile(f);
              setResult(null);
              setRowErrors([]);
              setProblem(null);
            }}
            required
            clearable
            clearButtonProps={{ 'aria-label': 'Clear the file' }}
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Select
              label="Kind of rows without one"
              placeholder="From the file's kind column"
              data={KIND_OPTIONS}
              value={kind}
              onChange={(v) => setKind(v as Kind | null)}
              clearable
            />
            {providers.shown && (
              <ProviderSelect
                choice={providers}
                label="Traffic provider of rows without one"
                value={providerId}
                onChange={setProvider}
              />
            )}
          </SimpleGrid>
          <TextInput
            label="Expires on, for rows without an expiry (optional)"
            description={`They stop blocking at the end of this day (${clock.zone}); empty: never.`}
            type="date"
            value={expires}
            onChange={(e) => setExpires(e.currentTarget.value)}
          />
          {result && (
            <Alert color="green" data-testid="bulk-result">
              {result.rows.toLocaleString()} {result.rows === 1 ? 'row' : 'rows'} read: {result.added.toLocaleString()}{' '}
              added, {result.already_listed.toLocaleString()} already listed.
            </Alert>
          )}
          {problem && (
            <Alert color="red" role="alert" title={problem} data-testid="bulk-errors">
              {rowErrors.length > 0 && (
                <List size="sm">
                  {rowErrors.map((e) => (
                    <List.Item key={`${e.field}:${e.message}`}>
                      {fieldText(e.field)}: {e.message}
                    </List.Item>
                  ))}
                </List>
              )}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {result ? 'Close' : 'Cancel'}
            </Button>
            <Button type="submit" loading={sending} disabled={!file || (!providers.global && !providerId)}>
              Add entries
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
