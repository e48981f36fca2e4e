import { Alert, Badge, Button, Code, Group, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorAlert } from '../../ui/EditorPage';
import { CopyValueButton } from '../../ui/CopyValueButton';
import { useClock } from '../../ui/useClock';

type LicenceData = paths['/api/licence']['get']['responses'][200]['content']['application/json'];

const STATUS: Record<LicenceData['status'], { label: string; color: string }> = {
  community: { label: 'Community', color: 'gray' },
  valid: { label: 'Valid', color: 'green' },
  expiring: { label: 'Expiring soon', color: 'yellow' },
  expired: { label: 'Expired', color: 'red' },
  invalid: { label: 'Invalid', color: 'red' },
};

/** /settings/licence (admins): the installation id, the licence in force, and installing a key. */
export default function Licence() {
  const licence = useQuery({ queryKey: ['licence'], queryFn: async () => must(await api.GET('/api/licence')) });
  return (
    <Stack maw={760}>
      <Title order={1} size="h2">
        Licence
      </Title>
      {licence.isPending ? (
        <Loading />
      ) : licence.isError ? (
        <ErrorAlert error={licence.error} />
      ) : (
        <>
          <InForce data={licence.data} />
          <InstallForm />
        </>
      )}
    </Stack>
  );
}

function InForce({ data }: { data: LicenceData }) {
  const queryClient = useQueryClient();
  const { date, zone } = useClock();
  const [removing, setRemoving] = useState(false);
  const { licence, status } = data;
  const limits = Object.entries(licence?.limits ?? {});
  return (
    <Stack>
      <Group gap="xs">
        <Text fw={500}>Installation id</Text>
        <Code data-testid="installation-id">{data.installation_id}</Code>
        <CopyValueButton value={data.installation_id} size="compact-xs" variant="default" />
      </Group>
      <Text size="sm" c="dimmed">
        Give this id to the vendor to get a licence bound to this installation.
      </Text>
      <Group gap="xs">
        <Text fw={500}>Status</Text>
        <Badge color={STATUS[status].color} data-testid="licence-status">
          {STATUS[status].label}
        </Badge>
      </Group>
      {data.warning && (
        <Alert color={status === 'expiring' ? 'yellow' : 'red'} role="alert" data-testid="licence-warning">
          {data.warning}
        </Alert>
      )}
      {!licence ? (
        status === 'community' && (
          <Text data-testid="licence-community">
            No licence is installed: the community plan is in force. Nothing in Leadgate is limited without a licence.
          </Text>
        )
      ) : (
        <Table withRowBorders={false} data-testid="licence-details" w="auto">
          <Table.Tbody>
            <Row label="Holder" value={licence.holder} />
            <Row label="Plan" value={licence.plan} />
            <Row
              label="Limits"
              value={
                limits.length
                  ? limits.map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v.toLocaleString()}`).join(', ')
                  : 'none'
              }
            />
            <Row label="Issued" value={`${date(licence.issued_at)} (${zone})`} />
            <Row
              label="Expires"
              value={`${date(licence.expires_at)} (${licence.days_left} day${licence.days_left === 1 ? '' : 's'} left)`}
            />
            <Row label="Bound to" value={licence.installation_id ?? 'any installation'} />
            <Row label="Licence id" value={licence.licence_id} />
          </Table.Tbody>
        </Table>
      )}
      {status !== 'community' && (
        <Group>
          <Button variant="light" color="red" onClick={() => setRemoving(true)}>
            Remove licence
          </Button>
        </Group>
      )}
      <ConfirmDialog
        opened={removing}
        title="Remove the licence?"
        confirmLabel="Remove"
        onClose={() => setRemoving(false)}
        onConfirm={async () => {
          queryClient.setQueryData(['licence'], must(await api.DELETE('/api/licence')));
          setRemoving(false);
        }}
      >
        <Text>The community plan applies again. You can install the same key later.</Text>
      </ConfirmDialog>
    </Stack>
  );
}

function Row({ label, value }: { label: string; value: string }) {
  return (
    <Table.Tr>
      <Table.Td c="dimmed" pl={0}>
        {label}
      </Table.Td>
      <Table.Td data-testid={`licence-${label.toLowerCase().replace(/ /g, '-')}`}>{value}</Table.Td>
    </Table.Tr>
  );
}

function InstallForm() {
  const queryClient = useQueryClient();
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [installed, setInstalled] = useState(false);
  const [saving, setSaving] = useState(false);

  async function install(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setProblem(null);
    setInstalled(false);
    try {
      const r = await api.PUT('/api/licence', { body: { key } });
      if (r.error) {
        // The API's own sentence (it says why, and that the licence in force is unchanged).
        setProblem(problemText(r.error as Problem));
        return;
      }
      queryClient.setQueryData(['licence'], r.data);
      setKey('');
      setInstalled(true);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <form onSubmit={install}>
      <Stack>
        <Title order={2} size="h4">
          Install a licence key
        </Title>
        <Textarea
          label="Licence key"
          description="Paste the whole key (it starts with LG1.). It is checked on this server; nothing is sent anywhere."
          autosize
          minRows={3}
          maxRows={8}
          value={key}
          onChange={(e) => {
            setKey(e.currentTarget.value);
            setInstalled(false);
          }}
          styles={{ input: { fontFamily: 'monospace' } }}
        />
        {problem && (
          <Alert
            color="red"
            role="alert"
            title="The key was not installed; the licence in force is unchanged."
            data-testid="licence-error"
          >
            {problem}
          </Alert>
        )}
        {installed && (
          <Alert color="green" data-testid="licence-installed">
            Licence installed.
          </Alert>
        )}
        <Group>
          <Button type="submit" loading={saving} disabled={!key.trim()}>
            Install
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
