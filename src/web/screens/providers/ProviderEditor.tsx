import { Alert, Anchor, Button, Checkbox, Group, Modal, NumberInput, SegmentedControl, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';
import { fieldErrors, noErrors, refusal } from './fields';
import { TokenModal, type ShownToken } from './TokenModal';

type Provider = paths['/api/traffic-providers/{id}']['get']['responses'][200]['content']['application/json'];
type Field = 'email' | 'phone';

interface Form {
  name: string;
  status: 'active' | 'paused';
  ips: string; // one CIDR or address a line, as typed
  fields: Field[];
  window_hours: number | string;
  scope: 'provider' | 'global';
}

function formOf(p: Provider | null): Form {
  const policy = p?.duplicate_policy ?? { fields: ['email', 'phone'] as Field[], window_hours: 720, scope: 'provider' as const };
  return { name: p?.name ?? '', status: p?.status ?? 'active', ips: p?.allowed_ips.join('\n') ?? '', ...policy, fields: [...policy.fields] };
}

// Blank lines are dropped, so line numbers in messages count the addresses sent.
const ipsOf = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** /traffic-providers/new makes a provider; /traffic-providers/:id edits one. */
export default function ProviderEditor() {
  const id = useParams().id ?? 'new';
  const isNew = id === 'new';
  // Lives above the form, so the token shown after creating survives the move to the new id.
  const [shown, setShown] = useState<ShownToken | null>(null);
  const provider = useQuery({
    queryKey: ['traffic-provider', id],
    enabled: !isNew,
    queryFn: async () => must(await api.GET('/api/traffic-providers/{id}', { params: { path: { id } } })),
  });

  let body;
  if (isNew) body = <ProviderForm key="new" provider={null} onToken={setShown} />;
  else if (provider.isPending) body = <Loading />;
  else if (provider.isError)
    body = (
      <Alert color="red" role="alert">
        {problemText(provider.error)}
      </Alert>
    );
  else body = <ProviderForm key={id} provider={provider.data} onToken={setShown} />;

  return (
    <Stack>
      <Anchor component={Link} to="/traffic-providers" size="sm">
        ← All traffic providers
      </Anchor>
      {body}
      <TokenModal shown={shown} onClose={() => setShown(null)} />
    </Stack>
  );
}

function ProviderForm({ provider, onToken }: { provider: Provider | null; onToken: (t: ShownToken) => void }) {
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const [form, setForm] = useState<Form>(() => formOf(provider));
  const [errors, setErrors] = useState(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState<boolean>(Boolean((location.state as { saved?: boolean } | null)?.saved));
  const [saving, setSaving] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const [rotating, setRotating] = useState(false);

  const archived = Boolean(provider?.archived_at);
  const mayEdit = whoami.data?.permissions.includes('traffic_providers:edit') ?? false;
  const canEdit = mayEdit && !archived;
  const set = (patch: Partial<Form>) => {
    setSaved(false);
    setForm((f) => ({ ...f, ...patch }));
  };

  async function save() {
    setSaving(true);
    setSaved(false);
    try {
      const body = {
        name: form.name,
        status: form.status,
        allowed_ips: ipsOf(form.ips),
        // A cleared number goes to the API as null, so the API names the field.
        duplicate_policy: { fields: form.fields, window_hours: form.window_hours === '' ? (null as unknown as number) : Number(form.window_hours), scope: form.scope },
      };
      const r = provider
        ? await api.PATCH('/api/traffic-providers/{id}', { params: { path: { id: provider.id } }, body })
        : await api.POST('/api/traffic-providers', { body });
      if (r.error) {
        const p = r.error as Problem;
        setErrors(fieldErrors(p.errors, ['name', 'status', 'allowed_ips', 'duplicate_policy.fields', 'duplicate_policy.window_hours', 'duplicate_policy.scope'], (input, rest) =>
          input === 'allowed_ips' ? rest.replace(/^\[(\d+)\]/, (_, i: string) => `Line ${Number(i) + 1}`) : rest,
        ));
        setProblem(refusal(p, 'traffic provider'));
        return;
      }
      setErrors(noErrors);
      setProblem(null);
      await queryClient.invalidateQueries({ queryKey: ['traffic-providers'] });
      // Only a new provider's answer carries its token; it is kept out of the query cache.
      const { token, ...stored } = r.data as Provider & { token?: string };
      queryClient.setQueryData(['traffic-provider', stored.id], stored);
      if (token) {
        onToken({ name: stored.name, token });
        navigate(`/traffic-providers/${stored.id}`, { replace: true, state: { saved: true } });
      } else {
        setForm(formOf(stored));
        setSaved(true);
      }
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setSaving(false);
    }
  }

  async function rotate() {
    if (!provider) return;
    setRotating(true);
    try {
      const r = await api.POST('/api/traffic-providers/{id}/rotate-token', { params: { path: { id: provider.id } } });
      if (r.error) setProblem(problemText(r.error));
      else {
        const { token, ...rest } = r.data;
        queryClient.setQueryData(['traffic-provider', rest.id], rest);
        await queryClient.invalidateQueries({ queryKey: ['traffic-providers'] });
        onToken({ name: rest.name, token });
      }
    } catch (e) {
      setProblem(problemText(e));
    } finally {
      setRotating(false);
      setConfirmRotate(false);
    }
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{provider ? provider.name : 'New traffic provider'}</Title>
        <Group>
          {provider && (
            <Button variant="default" color="red" onClick={() => setConfirmRotate(true)} disabled={!canEdit}>
              Rotate token
            </Button>
          )}
          <Button onClick={save} loading={saving} disabled={!canEdit}>
            Save
          </Button>
        </Group>
      </Group>
      {archived && <Alert color="gray">This provider is archived: it is kept for its leads and campaigns and cannot be changed.</Alert>}
      {whoami.data && !mayEdit && <Alert color="yellow">You can view traffic providers but not change them.</Alert>}
      {saved && (
        <Alert color="green" data-testid="provider-saved">
          Saved.
        </Alert>
      )}
      {problem && <Alert color="red" role="alert" title={problem} data-testid="provider-errors" />}
      {provider && (
        <Text size="sm" c="dimmed">
          Intake token: <code>{provider.token_prefix}…</code> (the rest is shown only when the token is made).
        </Text>
      )}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack maw={640}>
          <TextInput label="Name" value={form.name} onChange={(e) => set({ name: e.currentTarget.value })} error={errors.at('name')} />
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Status
            </Text>
            <SegmentedControl
              aria-label="Status"
              value={form.status}
              onChange={(v) => set({ status: v as Form['status'] })}
              data={[
                { value: 'active', label: 'Active' },
                { value: 'paused', label: 'Paused (its leads are refused)' },
              ]}
            />
          </Stack>
          <Textarea
            label="Allowed IPs"
            description="One address or CIDR per line (IPv4 or IPv6). Empty: leads are accepted from any address."
            autosize
            minRows={3}
            value={form.ips}
            onChange={(e) => set({ ips: e.currentTarget.value })}
            error={errors.at('allowed_ips')}
          />
          <Title order={4}>Duplicate policy</Title>
          <Checkbox.Group
            label="A lead is a duplicate when it matches an earlier lead on"
            description="Nothing ticked: no duplicate check."
            value={form.fields}
            onChange={(v) => set({ fields: v as Field[] })}
            error={errors.at('duplicate_policy.fields')}
          >
            <Group mt="xs">
              <Checkbox value="email" label="Email" />
              <Checkbox value="phone" label="Phone" />
            </Group>
          </Checkbox.Group>
          <NumberInput
            label="Window (hours)"
            description="How far back to look, 0–8760"
            value={form.window_hours}
            onChange={(v) => set({ window_hours: v })}
            allowDecimal={false}
            error={errors.at('duplicate_policy.window_hours')}
            w={220}
          />
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Compared with
            </Text>
            <SegmentedControl
              aria-label="Duplicate scope"
              value={form.scope}
              onChange={(v) => set({ scope: v as Form['scope'] })}
              data={[
                { value: 'provider', label: "This provider's leads" },
                { value: 'global', label: "Every provider's leads" },
              ]}
            />
          </Stack>
        </Stack>
      </fieldset>
      <Modal opened={confirmRotate} onClose={() => setConfirmRotate(false)} title="Rotate the intake token?">
        <Stack>
          <Text size="sm">
            A new token is made and the current one stops working at once: leads sent with it are refused until the provider uses the new one.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirmRotate(false)}>
              Cancel
            </Button>
            <Button color="red" onClick={rotate} loading={rotating}>
              Rotate token
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
