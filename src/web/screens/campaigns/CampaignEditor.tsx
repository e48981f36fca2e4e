import { CountryValues, countryValuesOf, objectOf, type CountryValue } from '../../ui/CountryValues';
import {
  Alert,
  Code,
  Group,
  NumberInput,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage } from '../../ui/EditorPage';
import { allOptions, type Option } from '../../ui/options';
import { StatusControl } from '../../ui/StatusControl';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import { fieldErrors } from '../../ui/fields';
import { EditorHeader } from '../../ui/EditorHeader';
import { CopyValueButton } from '../../ui/CopyValueButton';

type Campaign = paths['/api/campaigns/{id}']['get']['responses'][200]['content']['application/json'];

interface Form {
  name: string;
  status: 'active' | 'paused';
  traffic_provider_id: string | null;
  flow_id: string | null; // null: leads are stored but not routed
  countries: string[];
  model: 'cpl' | 'cpa';
  amount: number | string;
  byCountry: CountryValue[];
}

const formOf = (c: Campaign | null): Form => ({
  name: c?.name ?? '',
  status: c?.status ?? 'active',
  traffic_provider_id: c?.traffic_provider_id ?? null,
  flow_id: c?.flow_id ?? null,
  countries: c?.countries ?? [],
  model: c?.payout.model ?? 'cpl',
  amount: c?.payout.amount ?? 0,
  byCountry: countryValuesOf(c?.payout.by_country),
});

/** /campaigns/new makes a campaign; /campaigns/:id edits one. */
export default function CampaignEditor() {
  return (
    <EditorPage
      queryKey="campaign"
      load={async (id) => must(await api.GET('/api/campaigns/{id}', { params: { path: { id } } }))}
      back={{ to: '/campaigns', label: 'All campaigns' }}
    >
      {(campaign, id) => <CampaignForm key={id} campaign={campaign} />}
    </EditorPage>
  );
}

function CampaignForm({ campaign }: { campaign: Campaign | null }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  // A list the role cannot read is not asked for: the pickers then offer the campaign's own provider and flow.
  const held = whoami.data?.permissions ?? [];
  const providers = useQuery({
    queryKey: ['traffic-providers', 'all'],
    enabled: held.includes('traffic_providers:view'),
    queryFn: () => allOptions('/api/traffic-providers'),
  });
  const flows = useQuery({
    queryKey: ['flows', 'all'],
    enabled: held.includes('flows:view'),
    queryFn: () => allOptions('/api/flows'),
  });
  const { form, set, errors, problem, saved, saving, guard, submit, savedAs } = useEditorForm(
    () => formOf(campaign),
    (k) =>
      k === 'model' || k === 'amount' ? ['payout', `payout.${k}`] : k === 'byCountry' ? ['payout.by_country'] : [k],
  );

  // A new campaign takes the traffic provider, and the flow, when there is only one.
  const onlyProvider = !campaign && providers.data?.length === 1 ? providers.data[0].value : null;
  const onlyFlow = !campaign && flows.data?.length === 1 ? flows.data[0].value : null;
  useEffect(() => {
    if (onlyProvider && !form.traffic_provider_id) set({ traffic_provider_id: onlyProvider });
    if (onlyFlow && !form.flow_id) set({ flow_id: onlyFlow });
    // Once, when the lists arrive.
  }, [onlyProvider, onlyFlow]);

  const archived = Boolean(campaign?.archived_at);
  const mayEdit = whoami.data?.permissions.includes('campaigns:edit') ?? false;
  const canEdit = mayEdit && !archived;

  function save() {
    const body = {
      name: form.name,
      status: form.status,
      // Unchosen or cleared: sent as is, so the API names the field instead of the UI guessing.
      traffic_provider_id: form.traffic_provider_id ?? '',
      flow_id: form.flow_id,
      countries: form.countries,
      payout: {
        model: form.model,
        amount: form.amount === '' ? (null as unknown as number) : Number(form.amount),
        currency: 'USD' as const,
        by_country: objectOf(form.byCountry),
      },
    };
    return submit(
      () =>
        campaign
          ? api.PATCH('/api/campaigns/{id}', { params: { path: { id: campaign.id } }, body })
          : api.POST('/api/campaigns', { body }),
      (p) => ({
        errors: fieldErrors(p.errors, {
          name: 'Name',
          status: 'Status',
          traffic_provider_id: 'Traffic provider',
          flow_id: 'Flow',
          countries: 'Countries',
          'payout.model': 'Payout model',
          'payout.amount': 'Payout (USD)',
          'payout.by_country': 'Payouts per country',
          payout: 'Payout',
        }),
        problem: refusal(p, 'campaign'),
      }),
      async (stored) => {
        queryClient.setQueryData(['campaign', stored.id], stored);
        await queryClient.invalidateQueries({ queryKey: ['campaigns'] });
        if (campaign) savedAs(formOf(stored));
        else navigate(`/campaigns/${stored.id}`, { replace: true, state: { saved: true } });
      },
    );
  }

  // An archived provider or flow still shows by name on a campaign that refers to it.
  const withCurrent = (
    options: Option[] | undefined,
    id: string | null | undefined,
    name: string | null | undefined,
  ) =>
    id && name && !options?.some((o) => o.value === id)
      ? [...(options ?? []), { value: id, label: name }]
      : (options ?? []);

  return (
    <Stack>
      <EditorHeader
        title={campaign ? campaign.name : 'New campaign'}
        testId="campaign"
        actions={
          <>
            {campaign && (
              <DeleteButton
                what="campaign"
                name={campaign.name}
                remove={() => api.DELETE('/api/campaigns/{id}', { params: { path: { id: campaign.id } } })}
                list={{ to: '/campaigns', queryKey: 'campaigns' }}
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
          <Alert color="gray">This campaign is archived: it is kept for its leads and cannot be changed.</Alert>
        )}
        {whoami.data && !mayEdit && <Alert color="yellow">You can view campaigns but not change them.</Alert>}
      </EditorHeader>
      {campaign && <IntakeId campaign={campaign} />}
      {providers.isError && (
        <Alert color="red">Traffic providers could not be loaded: {problemText(providers.error)}</Alert>
      )}
      {flows.isError && <Alert color="red">Flows could not be loaded: {problemText(flows.error)}</Alert>}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack maw={640}>
          <TextInput
            label="Name"
            value={form.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={errors.at('name')}
          />
          <StatusControl value={form.status} onChange={(status) => set({ status })} />
          <Select
            label="Traffic provider"
            placeholder="Choose a traffic provider"
            searchable
            data={withCurrent(providers.data, campaign?.traffic_provider_id, campaign?.traffic_provider_name)}
            value={form.traffic_provider_id}
            onChange={(v) => set({ traffic_provider_id: v })}
            allowDeselect={false}
            error={errors.at('traffic_provider_id')}
          />
          <Select
            label="Flow"
            description="Which partners the leads are offered to. None: leads are stored but not routed."
            placeholder="None"
            searchable
            clearable
            data={withCurrent(flows.data, campaign?.flow_id, campaign?.flow_name)}
            value={form.flow_id}
            onChange={(v) => set({ flow_id: v })}
            allowDeselect={false}
            error={errors.at('flow_id')}
          />
          <TagsInput
            label="Countries"
            description="ISO codes (DE, AT…). Empty: every country."
            placeholder={form.countries.length ? '' : 'All countries'}
            value={form.countries}
            onChange={(v) => set({ countries: [...new Set(v.map((c) => c.trim().toUpperCase()))] })}
            splitChars={[',', ' ']}
            error={errors.at('countries')}
          />
          <Group align="flex-start">
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Payout model
              </Text>
              <SegmentedControl
                aria-label="Payout model"
                value={form.model}
                onChange={(v) => set({ model: v as Form['model'] })}
                data={[
                  { value: 'cpl', label: 'CPL (per lead)' },
                  { value: 'cpa', label: 'CPA (per FTD)' },
                ]}
              />
            </Stack>
            <NumberInput
              label="Payout (USD)"
              prefix="$"
              decimalScale={2}
              value={form.amount}
              onChange={(v) => set({ amount: v })}
              error={errors.at('payout.amount') ?? errors.at('payout.model') ?? errors.at('payout')}
              w={200}
            />
          </Group>
          <CountryValues
            label="Payouts per country"
            description="Replace the payout for leads from these countries; recorded on each lead when it is paid for, so a later change rewrites nothing"
            valueLabel="Payout"
            decimal
            rows={form.byCountry}
            onChange={(byCountry) => set({ byCountry })}
            error={errors.at('payout.by_country')}
            addLabel="Add a country payout"
          />
        </Stack>
      </fieldset>
    </Stack>
  );
}

/** What the traffic provider sends to post leads into this campaign. */
function IntakeId({ campaign }: { campaign: Campaign }) {
  return (
    <Paper withBorder p="sm" maw={640}>
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Campaign id for the traffic provider
        </Text>
        <Group gap="xs" wrap="nowrap">
          <Code data-testid="campaign-id" style={{ overflowWrap: 'anywhere' }}>
            {campaign.id}
          </Code>
          <CopyValueButton value={campaign.id} size="xs" />
        </Group>
        <Text size="xs" c="dimmed">
          {campaign.traffic_provider_name ?? 'The traffic provider'} sends it as <Code>campaign_id</Code> in each lead
          it posts to <Code>POST /api/intake/leads</Code>, with its intake token. It may leave it out only while it has
          exactly one active campaign.
        </Text>
      </Stack>
    </Paper>
  );
}
