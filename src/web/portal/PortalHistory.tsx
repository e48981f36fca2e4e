import { Alert, Button, Code, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { saveBlob } from '../ui/download';
import { useClock } from '../ui/useClock';

const json = (value: unknown, name: string) =>
  saveBlob(new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' }), name);

/**
 * The provider's verifiable history: the latest signed checkpoint, and downloads of the whole log
 * (JSON lines, as scripts/verify-provider-log.mjs reads it), the checkpoint and the public key.
 */
export default function PortalHistory() {
  const clock = useClock();
  const checkpoint = useQuery({
    queryKey: ['portal-checkpoint'],
    queryFn: async () => must(await api.GET('/api/portal/checkpoints/latest')),
  });
  const log = useMutation({
    mutationFn: async () => {
      const lines: string[] = [];
      let after = 0;
      for (;;) {
        const page = must(await api.GET('/api/portal/log', { params: { query: { after, limit: 500 } } }));
        for (const entry of page.data) lines.push(JSON.stringify(entry));
        if (!page.next_cursor || page.data.length === 0) break;
        after = page.data[page.data.length - 1].seq;
      }
      saveBlob(
        new Blob(
          lines.map((l) => `${l}\n`),
          { type: 'application/x-ndjson' },
        ),
        'leadgate-log.jsonl',
      );
      return lines.length;
    },
  });
  const key = useMutation({
    mutationFn: async () => json(must(await api.GET('/api/portal/public-key')), 'leadgate-public-key.json'),
  });
  const c = checkpoint.data;

  return (
    <Stack maw={760}>
      <Title order={1} size="h2">
        History
      </Title>
      <Text size="sm">
        Every fact shown to you about your leads (received, accepted or refused, sale status, FTD, payout, any
        correction) is appended to your log, each entry carrying the hash of the one before, and the server signs its
        head. Save the log and a checkpoint now and then; later <Code>scripts/verify-provider-log.mjs</Code> (plain
        Node) checks your copy against today&apos;s log and names the first entry that differs.
      </Text>
      {[checkpoint, log, key].map(
        (q, i) =>
          q.isError && (
            <Alert key={i} color="red" role="alert">
              {problemText(q.error)}
            </Alert>
          ),
      )}
      {checkpoint.isPending ? (
        <Loading />
      ) : c ? (
        <Stack gap={4} data-testid="portal-checkpoint">
          <Title order={2} size="h4">
            Latest checkpoint
          </Title>
          <Text size="sm">
            {c.seq} entries, signed {clock.dateTime(c.signed_at)} ({clock.zone})
          </Text>
          <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
            {c.hash}
          </Text>
        </Stack>
      ) : null}
      <Group>
        <Button onClick={() => log.mutate()} loading={log.isPending} data-testid="download-log">
          Download the log
        </Button>
        <Button variant="default" onClick={() => c && json(c, 'leadgate-checkpoint.json')} disabled={!c}>
          Download the checkpoint
        </Button>
        <Button variant="default" onClick={() => key.mutate()} loading={key.isPending}>
          Download the public key
        </Button>
      </Group>
      {log.isSuccess && (
        <Text size="sm" role="status">
          Saved {log.data} entries.
        </Text>
      )}
    </Stack>
  );
}
