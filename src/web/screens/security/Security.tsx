import { ActionIcon, Alert, Button, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useUnsavedGuard } from '../../ui/useUnsavedGuard';
import { useWhoami } from '../../whoami';

type Settings = paths['/api/settings/security']['get']['responses'][200]['content']['application/json'];

/** /settings/security: the account IP allow-list (the only security setting the API has today). */
export default function Security() {
  const settings = useQuery({
    queryKey: ['security'],
    queryFn: async () => must(await api.GET('/api/settings/security')),
  });
  return (
    <Stack maw={760}>
      <Title order={1} size="h2">
        Security
      </Title>
      {settings.isPending ? (
        <Loading />
      ) : settings.isError ? (
        <ErrorAlert error={settings.error} />
      ) : (
        <AllowListForm settings={settings.data} />
      )}
    </Stack>
  );
}

function AllowListForm({ settings }: { settings: Settings }) {
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const guard = useUnsavedGuard();
  const [list, setList] = useState(settings.ip_allowlist);
  const [entry, setEntry] = useState('');
  // Errors by row index (the API names `ip_allowlist[i]`); `problem` is the refusal as a whole.
  const [rowErrors, setRowErrors] = useState<Record<number, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  const canEdit = whoami.data?.permissions.includes('settings:edit') ?? false;
  const dirty = list.join('\n') !== settings.ip_allowlist.join('\n');
  const ip = settings.your_ip;
  const listsMyAddress = list.some((c) => c === ip || c === `${ip}/32` || c === `${ip}/128`);

  const change = (next: string[]) => {
    guard.markDirty();
    setSaved(false);
    setRowErrors({});
    setList(next);
  };

  function add(e: FormEvent) {
    e.preventDefault();
    const value = entry.trim();
    if (!value) return;
    // Checking the entry is the API's job (on save); adding only skips an exact repeat.
    if (!list.includes(value)) change([...list, value]);
    setEntry('');
  }

  async function save() {
    setSaving(true);
    setProblem(null);
    try {
      const r = await api.PUT('/api/settings/security', { body: { ip_allowlist: list } });
      if (r.error) {
        const p = r.error as Problem;
        const byRow: Record<number, string> = {};
        for (const err of p.errors ?? []) {
          const i = /^ip_allowlist\[(\d+)\]$/.exec(err.field)?.[1];
          if (i !== undefined) byRow[Number(i)] = err.message;
        }
        setRowErrors(byRow);
        setProblem(
          p.errors?.length ? 'The allow-list was not saved. Please correct the entries marked below.' : problemText(p),
        );
        return;
      }
      guard.markClean();
      // The API stores entries normalised (a bare address becomes /32 or /128): show them so.
      setList(r.data.ip_allowlist);
      queryClient.setQueryData<Settings>(['security'], { ...settings, ip_allowlist: r.data.ip_allowlist });
      setSaved(true);
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setSaving(false);
    }
  }

  return (
    <Stack>
      <Text>
        Only these addresses may sign in to the dashboard or use the API (sessions and API keys alike); every other
        address gets “403 ip_not_allowed”. An empty list allows every address. Lead intake and partner postbacks are not
        limited by it: traffic providers have their own list.
      </Text>
      <Alert color="yellow" title="Do not lock yourself out" data-testid="your-ip">
        Your current address is <Code>{ip}</Code>. A list that does not include it would lock you out, so the server
        refuses to save one. If colleagues sign in from other addresses, add theirs before saving too.
      </Alert>
      {whoami.data && !canEdit && <Alert color="yellow">You can view the allow-list but not change it.</Alert>}
      {saved && (
        <Alert color="green" data-testid="security-saved">
          Saved.
        </Alert>
      )}
      {problem && <Alert color="red" role="alert" title={problem} data-testid="security-errors" />}
      {list.length === 0 ? (
        <Text c="dimmed" data-testid="allowlist-empty">
          No entries: every address is allowed.
        </Text>
      ) : (
        <Table data-testid="allowlist">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Address or CIDR range</Table.Th>
              <Table.Th w={60} />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((cidr, i) => (
              <Table.Tr key={cidr} data-testid="allowlist-row">
                <Table.Td>
                  <Text ff="monospace" data-testid="allowlist-entry">
                    {cidr}
                  </Text>
                  {rowErrors[i] && (
                    <Text size="sm" c="red">
                      {rowErrors[i]}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    aria-label={`Remove ${cidr}`}
                    disabled={!canEdit}
                    onClick={() => change(list.filter((c) => c !== cidr))}
                  >
                    ✕
                  </ActionIcon>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <form onSubmit={add}>
        <Group align="flex-end">
          <TextInput
            label="New entry"
            description="An IPv4 or IPv6 address, or a CIDR range such as 203.0.113.0/24"
            placeholder="203.0.113.0/24"
            value={entry}
            onChange={(e) => setEntry(e.currentTarget.value)}
            disabled={!canEdit}
            w={360}
          />
          <Button type="submit" variant="default" disabled={!canEdit || !entry.trim()}>
            Add
          </Button>
          {!listsMyAddress && (
            <Button variant="subtle" disabled={!canEdit} onClick={() => change([...list, ip])}>
              Add my address
            </Button>
          )}
        </Group>
      </form>
      <Group>
        <Button onClick={save} loading={saving} disabled={!canEdit || !dirty}>
          Save allow-list
        </Button>
        {dirty && (
          <Text size="sm" c="dimmed">
            Unsaved changes: the list in force is still the saved one.
          </Text>
        )}
      </Group>
    </Stack>
  );
}
