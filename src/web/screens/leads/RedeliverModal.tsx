import { Alert, Button, Group, List, Modal, Radio, Select, Stack, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../../api/client';
import { useWhoami } from '../../whoami';

interface Props {
  /** The leads to send again (rejected or failed ones; others are refused by the API, per lead). */
  leads: { id: string; name: string; country: string }[];
  /** Selected leads left out because they are neither rejected nor failed (said in the dialog). */
  skipped?: number;
  opened: boolean;
  onClose: () => void;
  /** Called after a run, whatever each lead's outcome: the caller refreshes what it shows. */
  onDone: () => void;
}

type Target = 'own' | 'flow' | 'partner';

interface Outcome {
  id: string;
  name: string;
  ok: boolean;
  text: string;
}

/**
 * The records a redelivery can go to (the first 500, archived ones excluded by the API). A partner
 * that does not take every country of `countries` (the leads' ones; none for flows) is shown disabled, with the countries it lacks
 * (the API refuses it), after the ones that can take the leads.
 */
function useTargets(path: '/api/flows' | '/api/partners', enabled: boolean, countries: string[]) {
  const list = useQuery({
    queryKey: ['options', path],
    enabled,
    queryFn: async () => must(await api.GET(path, { params: { query: { limit: 500 } } })),
  });
  const options = (list.data?.data ?? []).map((r) => {
    const takes = 'countries' in r && r.countries.length ? r.countries : null;
    const missing = takes ? countries.filter((c) => !takes.includes(c)) : [];
    const label = r.status === 'paused' ? `${r.name} (paused)` : r.name;
    return missing.length
      ? { value: r.id, label: `${label} (does not take ${missing.join(', ')})`, disabled: true }
      : { value: r.id, label };
  });
  return [...options.filter((o) => !o.disabled), ...options.filter((o) => o.disabled)];
}

/** What became of one lead, in words. */
function describe(lead: { status: string; partner_name: string | null; reason: string | null }): string {
  if (lead.status === 'delivered') return `delivered to ${lead.partner_name ?? 'a partner'}`;
  if (lead.status === 'pending') return 'being delivered (waiting for working hours or a partner)';
  return `${lead.status}${lead.reason ? `: ${lead.reason}` : ''}`;
}

/**
 * Confirm, then send each lead again: through its own flow (the default), another flow, or to one
 * partner (one attempt); then say what became of each. Every redelivery is audited by the API.
 */
export function RedeliverModal({ leads, skipped = 0, opened, onClose, onDone }: Props) {
  const [target, setTarget] = useState<Target>('own');
  const [choice, setChoice] = useState<string | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [sent, setSent] = useState(0);
  // Another flow or one partner is offered only to a role that may read the list to choose from.
  const permissions = useWhoami().data?.permissions ?? [];
  const mayPickFlow = permissions.includes('flows:view');
  const mayPickPartner = permissions.includes('partners:view');
  const countries = [...new Set(leads.map((l) => l.country))];
  const flows = useTargets('/api/flows', opened && target === 'flow', []);
  const partners = useTargets('/api/partners', opened && target === 'partner', countries);

  const run = useMutation({
    mutationFn: async (): Promise<Outcome[]> => {
      const body = target === 'flow' ? { flow_id: choice! } : target === 'partner' ? { partner_id: choice! } : {};
      const out: Outcome[] = [];
      setSent(0);
      // One at a time, in the order shown: each goes out as a new lead would, and the count shows
      // how far a long run has got.
      for (const { id, name } of leads) {
        const res = await api.POST('/api/leads/{id}/redeliver', { params: { path: { id } }, body });
        out.push(
          res.error === undefined && res.data
            ? { id, name, ok: res.data.status !== 'failed' && res.data.status !== 'rejected', text: describe(res.data) }
            : { id, name, ok: false, text: `not sent: ${problemText(res.error)}` },
        );
        setSent(out.length);
      }
      return out;
    },
    onSettled: onDone,
  });

  function close() {
    run.reset();
    setTarget('own');
    setChoice(null);
    setMissing(null);
    onClose();
  }

  function confirm() {
    if (target !== 'own' && !choice) {
      setMissing(target === 'flow' ? 'Choose the flow to send through.' : 'Choose the partner to send to.');
      return;
    }
    run.mutate();
  }

  const n = leads.length;
  const picker =
    target === 'own' ? null : (
      <Select
        label={target === 'flow' ? 'Flow' : 'Partner'}
        data={target === 'flow' ? flows : partners}
        value={choice}
        onChange={(v) => {
          setChoice(v);
          setMissing(null);
        }}
        error={missing}
        searchable
        required
        data-testid="redeliver-choice"
      />
    );
  return (
    <Modal opened={opened} onClose={close} title={n === 1 ? 'Redeliver lead' : `Redeliver ${n} leads`}>
      <Stack>
        {run.data ? (
          <List size="sm" data-testid="redeliver-results">
            {run.data.map((o) => (
              <List.Item key={o.id} c={o.ok ? undefined : 'red.9'} data-testid="redeliver-result" data-lead-id={o.id}>
                {n === 1 ? o.text : `${o.name}: ${o.text}`}
              </List.Item>
            ))}
          </List>
        ) : (
          <>
            {skipped > 0 && (
              <Text size="sm" data-testid="redeliver-skipped">
                {skipped === 1 ? '1 selected lead is' : `${skipped} selected leads are`} neither rejected nor failed and
                will not be sent.
              </Text>
            )}
            <Text size="sm">
              Only rejected or failed leads can be redelivered; each goes out as a new lead would (caps, working hours)
              and is recorded in the audit log.
            </Text>
            <Radio.Group
              label="Send to"
              value={target}
              onChange={(v) => {
                setTarget(v as Target);
                setChoice(null);
                setMissing(null);
              }}
            >
              <Stack gap="xs" mt={4}>
                <Radio value="own" label={n === 1 ? 'Its own flow' : 'Each lead’s own flow'} />
                {mayPickFlow && <Radio value="flow" label="Another flow" />}
                {mayPickPartner && <Radio value="partner" label="One partner (one attempt)" />}
              </Stack>
            </Radio.Group>
            {picker}
          </>
        )}
        {run.isError && (
          <Alert color="red" role="alert">
            {problemText(run.error)}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {run.data ? 'Done' : 'Cancel'}
          </Button>
          {!run.data && (
            <Button loading={run.isPending} onClick={confirm} data-testid="redeliver-confirm">
              Redeliver
            </Button>
          )}
          {run.isPending && n > 1 && (
            <Text size="sm" role="status" data-testid="redeliver-progress">
              Sent {sent} of {n}
            </Text>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
