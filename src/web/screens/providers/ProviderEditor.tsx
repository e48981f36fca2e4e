import { FlagRuleFields } from '../../ui/FlagRuleFields';
import type { Flag } from '../../ui/flags';
import {
  Alert,
  Button,
  Checkbox,
  Group,
  NumberInput,
  SegmentedControl,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage } from '../../ui/EditorPage';
import { StatusControl } from '../../ui/StatusControl';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import { fieldErrors } from '../../ui/fields';
import { PortalPanel } from './PortalPanel';
import { PostbacksPanel, useOperatorPostbacks } from './PostbacksPanel';
import { TokenModal, type ShownToken } from './TokenModal';
import {
  VELOCITY_LABELS,
  VelocitySection,
  velocityBody,
  velocityFormOf,
  velocityInput,
  type VelocityForm,
} from './VelocitySection';
import { EditorHeader } from '../../ui/EditorHeader';

type Provider = paths['/api/traffic-providers/{id}']['get']['responses'][200]['content']['application/json'];
type Field = 'email' | 'phone';

interface Form extends VelocityForm {
  name: string;
  status: 'active' | 'paused';
  ips: string; // one CIDR or address a line, as typed
  fields: Field[];
  window_hours: number | string;
  scope: 'provider' | 'global';
  silent_after_hours: number | string; // '' = never
  holdFlags: Flag[]; // the review rule: flags that hold a lead
  holdScore: number | string; // '' = no score holds a lead
}

function formOf(p: Provider | null): Form {
  const policy = p?.duplicate_policy ?? {
    fields: ['email', 'phone'] as Field[],
    window_hours: 720,
    scope: 'provider' as const,
  };
  return {
    name: p?.name ?? '',
    status: p?.status ?? 'active',
    ips: p?.allowed_ips.join('\n') ?? '',
    ...policy,
    fields: [...policy.fields],
    silent_after_hours: p?.silent_after_hours ?? '',
    ...velocityFormOf(p?.velocity),
    holdFlags: p?.review.hold_flags ?? [],
    holdScore: p?.review.min_score ?? '',
  };
}

// Blank lines are dropped, so line numbers in messages count the addresses sent.
const ipsOf = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** The review rule's inputs → the API's fields their errors name. */
const REVIEW_INPUTS = { holdFlags: 'review.hold_flags', holdScore: 'review.min_score' } as const;

/** /traffic-providers/new makes a provider; /traffic-providers/:id edits one. */
export default function ProviderEditor() {
  // Lives above the form, so the token shown after creating survives the move to the new id.
  const [shown, setShown] = useState<ShownToken | null>(null);
  return (
    <>
      <EditorPage
        queryKey="traffic-provider"
        load={async (id) => must(await api.GET('/api/traffic-providers/{id}', { params: { path: { id } } }))}
        back={{ to: '/traffic-providers', label: 'All traffic providers' }}
      >
        {(provider, id) => <ProviderForm key={id} provider={provider} onToken={setShown} />}
      </EditorPage>
      <TokenModal shown={shown} onClose={() => setShown(null)} />
    </>
  );
}

function ProviderForm({ provider, onToken }: { provider: Provider | null; onToken: (t: ShownToken) => void }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const { form, set, errors, problem, saved, saving, guard, submit, savedAs } = useEditorForm(
    () => formOf(provider),
    (k) => [
      REVIEW_INPUTS[k as keyof typeof REVIEW_INPUTS] ??
        velocityInput(k) ??
        (k === 'ips'
          ? 'allowed_ips'
          : k === 'name' || k === 'status' || k === 'silent_after_hours'
            ? k
            : `duplicate_policy.${k}`),
    ],
  );
  const [confirmRotate, setConfirmRotate] = useState(false);

  const archived = Boolean(provider?.archived_at);
  const mayEdit = whoami.data?.permissions.includes('traffic_providers:edit') ?? false;
  const canEdit = mayEdit && !archived;

  function save() {
    const body = {
      name: form.name,
      status: form.status,
      allowed_ips: ipsOf(form.ips),
      // A cleared number goes to the API as null, so the API names the field.
      duplicate_policy: {
        fields: form.fields,
        window_hours: form.window_hours === '' ? (null as unknown as number) : Number(form.window_hours),
        scope: form.scope,
      },
      silent_after_hours: form.silent_after_hours === '' ? null : Number(form.silent_after_hours),
      velocity: velocityBody(form),
      review: { hold_flags: form.holdFlags, min_score: form.holdScore === '' ? null : Number(form.holdScore) },
    };
    return submit(
      () =>
        provider
          ? api.PATCH('/api/traffic-providers/{id}', { params: { path: { id: provider.id } }, body })
          : api.POST('/api/traffic-providers', { body }),
      (p) => ({
        errors: fieldErrors(
          p.errors,
          {
            name: 'Name',
            status: 'Status',
            allowed_ips: 'Allowed IPs',
            'duplicate_policy.fields': 'Duplicate fields',
            'duplicate_policy.window_hours': 'Window (hours)',
            'duplicate_policy.scope': 'Duplicate scope',
            silent_after_hours: 'Alert when silent for (hours)',
            ...VELOCITY_LABELS,
          },
          { allowed_ips: 'line' },
        ),
        problem: refusal(p, 'traffic provider'),
      }),
      async (data) => {
        await queryClient.invalidateQueries({ queryKey: ['traffic-providers'] });
        // Only a new provider's answer carries its token; it is kept out of the query cache.
        const { token, intake_url, ...stored } = data as Provider & { token?: string; intake_url?: string };
        queryClient.setQueryData(['traffic-provider', stored.id], stored);
        if (token && intake_url) {
          onToken({ name: stored.name, token, intakeUrl: intake_url });
          navigate(`/traffic-providers/${stored.id}`, { replace: true, state: { saved: true } });
        } else savedAs(formOf(stored));
      },
    );
  }

  async function rotate() {
    const { token, intake_url, ...rest } = must(
      await api.POST('/api/traffic-providers/{id}/rotate-token', { params: { path: { id: provider!.id } } }),
    );
    queryClient.setQueryData(['traffic-provider', rest.id], rest);
    await queryClient.invalidateQueries({ queryKey: ['traffic-providers'] });
    setConfirmRotate(false);
    onToken({ name: rest.name, token, intakeUrl: intake_url });
  }

  return (
    <Stack>
      <EditorHeader
        title={provider ? provider.name : 'New traffic provider'}
        testId="provider"
        actions={
          <>
            {provider && (
              <Button variant="default" color="red" onClick={() => setConfirmRotate(true)} disabled={!canEdit}>
                Rotate token
              </Button>
            )}
            {provider && (
              <DeleteButton
                what="traffic provider"
                name={provider.name}
                remove={() => api.DELETE('/api/traffic-providers/{id}', { params: { path: { id: provider.id } } })}
                list={{ to: '/traffic-providers', queryKey: 'traffic-providers' }}
                onDeleted={guard.markClean}
                disabled={!canEdit}
              />
            )}
          </>
        }
        onSave={save}
        saving={saving}
        canEdit={canEdit}
        saved={saved}
        problem={problem}
        summary={errors.summary}
      >
        {archived && (
          <Alert color="gray">
            This provider is archived: it is kept for its leads and campaigns and cannot be changed.
          </Alert>
        )}
        {whoami.data && !mayEdit && <Alert color="yellow">You can view traffic providers but not change them.</Alert>}
      </EditorHeader>
      {provider && (
        <Text size="sm" c="dimmed">
          Intake token: <code>{provider.token_prefix}…</code> (the rest is shown only when the token is made).
        </Text>
      )}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack maw={640}>
          <TextInput
            label="Name"
            value={form.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={errors.at('name')}
          />
          <StatusControl
            value={form.status}
            onChange={(status) => set({ status })}
            paused="Paused (its leads are refused)"
          />
          <Textarea
            label="Allowed IPs"
            description="One address or CIDR per line (IPv4 or IPv6). Empty: leads are accepted from any address."
            autosize
            minRows={3}
            value={form.ips}
            onChange={(e) => set({ ips: e.currentTarget.value })}
            error={errors.at('allowed_ips')}
          />
          <NumberInput
            label="Alert when silent for (hours)"
            description="A notification when no lead came for this long; empty: never"
            placeholder="Never"
            value={form.silent_after_hours}
            onChange={(v) => set({ silent_after_hours: v })}
            allowDecimal={false}
            min={1}
            error={errors.at('silent_after_hours')}
            w={260}
          />
          <Title order={2} size="h4">
            Duplicate policy
          </Title>
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
          <VelocitySection form={form} set={set} errors={errors} />
          <FlagRuleFields
            title="Review queue"
            testId="provider-review"
            flagsLabel="Hold leads flagged"
            flagsDescription="Leads with any of these flags wait in the review queue instead of being routed"
            noFlags="None: no flag holds a lead"
            scoreLabel="Hold leads scoring below"
            scoreDescription="0–100; empty: no score holds a lead"
            flags={form.holdFlags}
            minScore={form.holdScore}
            onFlags={(holdFlags) => set({ holdFlags })}
            onMinScore={(holdScore) => set({ holdScore })}
            flagsError={errors.at('review.hold_flags') ?? errors.at('review')}
            scoreError={errors.at('review.min_score')}
          />
        </Stack>
      </fieldset>
      <ConfirmDialog
        opened={confirmRotate}
        title="Rotate the intake token?"
        confirmLabel="Rotate token"
        onConfirm={rotate}
        onClose={() => setConfirmRotate(false)}
      >
        <Text size="sm">
          A new token is made and the current one stops working at once: leads sent with it are refused until the
          provider uses the new one.
        </Text>
      </ConfirmDialog>
      {provider && <ProviderPostbacks providerId={provider.id} canEdit={canEdit} />}
      {provider && <PortalPanel providerId={provider.id} canEdit={canEdit} />}
    </Stack>
  );
}

function ProviderPostbacks({ providerId, canEdit }: { providerId: string; canEdit: boolean }) {
  return <PostbacksPanel source={useOperatorPostbacks(providerId)} canEdit={canEdit} />;
}
