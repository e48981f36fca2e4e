import { Alert, Button, Group, NumberInput, Select, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';

type Settings = paths['/api/traffic-providers/{id}/portal']['get']['responses'][200]['content']['application/json'];
type Put = paths['/api/traffic-providers/{id}/portal']['put']['requestBody']['content']['application/json'];
type Word = Put['sale_status_map'][string];

const WORDS: Word[] = ['new', 'in_progress', 'no_answer', 'callback', 'not_interested', 'invalid', 'converted'];
const SWITCHES: [keyof Put & `${string}`, string][] = [
  ['portal_enabled', 'Portal open (its users may sign in)'],
  ['show_sale_status', 'Show sale statuses'],
  ['show_payout', 'Show payouts'],
  ['show_contacts', 'Show the contacts it sent (masked)'],
];

/** What the provider's portal shows: on/off switches, the FTD hold, and partners' sale-status words → the provider's. */
export function PortalSettings({ providerId, canEdit }: { providerId: string; canEdit: boolean }) {
  const queryClient = useQueryClient();
  const key = ['provider-portal', providerId];
  const current = useQuery({
    queryKey: key,
    queryFn: async () =>
      must(await api.GET('/api/traffic-providers/{id}/portal', { params: { path: { id: providerId } } })),
  });
  const [form, setForm] = useState<Settings | null>(null);
  useEffect(() => {
    if (current.data) setForm(current.data);
  }, [current.data]);
  const save = useMutation({
    mutationFn: async () => {
      const { partner_words: _words, ...body } = form!;
      return must(await api.PUT('/api/traffic-providers/{id}/portal', { params: { path: { id: providerId } }, body }), {
        ftd_hold_hours: 'FTD hold (hours)',
      });
    },
    onSuccess: (data) => queryClient.setQueryData(key, data),
  });

  if (current.isError)
    return (
      <Alert color="red" role="alert">
        {problemText(current.error)}
      </Alert>
    );
  if (!form) return <Loading />;
  const set = (patch: Partial<Settings>) => {
    save.reset();
    setForm((f) => ({ ...f!, ...patch }));
  };
  const words = [...new Set([...form.partner_words, ...Object.keys(form.sale_status_map)])].sort();

  return (
    <Stack gap="sm" data-testid="portal-settings">
      <Title order={3} size="h5">
        What the provider sees
      </Title>
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack gap="sm">
          {SWITCHES.map(([k, label]) => (
            <Switch
              key={k}
              label={label}
              checked={Boolean(form[k])}
              onChange={(e) => set({ [k]: e.currentTarget.checked })}
            />
          ))}
          <NumberInput
            label="FTD hold (hours)"
            description="An FTD reaches the provider (portal, postbacks) this long after it is recorded; the portal says so. 0: at once."
            value={form.ftd_hold_hours}
            onChange={(v) => set({ ftd_hold_hours: typeof v === 'number' ? v : 0 })}
            allowDecimal={false}
            min={0}
            max={720}
            w={{ base: '100%', sm: 260 }}
          />
          {form.show_sale_status && (
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Sale statuses: partners&apos; words → what the provider sees
              </Text>
              <Text size="xs" c="dimmed">
                A word not mapped reads in_progress. The words below are those partners used on this provider&apos;s
                leads.
              </Text>
              {words.length === 0 ? (
                <Text size="sm" data-testid="no-partner-words">
                  No partner has reported a sale status on this provider&apos;s leads yet.
                </Text>
              ) : (
                <Table data-testid="sale-status-map">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Partner&apos;s word</Table.Th>
                      <Table.Th>Provider sees</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {words.map((w) => (
                      <Table.Tr key={w}>
                        <Table.Td style={{ wordBreak: 'break-all' }}>{w}</Table.Td>
                        <Table.Td>
                          <Select
                            aria-label={`What the provider sees for ${w}`}
                            data={WORDS}
                            placeholder="in_progress"
                            clearable
                            value={form.sale_status_map[w] ?? null}
                            onChange={(v) => {
                              const map = { ...form.sale_status_map };
                              if (v) map[w] = v as Word;
                              else delete map[w];
                              set({ sale_status_map: map });
                            }}
                          />
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </Stack>
          )}
        </Stack>
      </fieldset>
      {save.isError && (
        <Alert color="red" role="alert">
          {problemText(save.error)}
        </Alert>
      )}
      {canEdit && (
        <Group>
          <Button onClick={() => save.mutate()} loading={save.isPending}>
            Save portal settings
          </Button>
          {save.isSuccess && (
            <Text size="sm" role="status" data-testid="portal-settings-saved">
              Saved.
            </Text>
          )}
        </Group>
      )}
    </Stack>
  );
}
