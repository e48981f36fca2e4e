import { Alert, Checkbox, Group, NumberInput, Stack, Switch, TagsInput, TextInput } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import { WEEKDAYS } from '../flows/form';
import { api, must } from '../../api/client';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage } from '../../ui/EditorPage';
import { StatusControl } from '../../ui/StatusControl';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { TimezoneSelect } from '../../ui/inputs';
import { noErrors, type FieldErrors } from '../../ui/fields';
import { useWhoami } from '../../whoami';
import {
  bodyOf,
  fieldErrors,
  formOf,
  inputsOf,
  localErrors,
  withLocal,
  withTemplate,
  type Partner,
  type PartnerForm,
} from './form';
import { TemplatePicker } from './TemplatePicker';
import { IntegrationFields } from './IntegrationFields';
import { PostbackUrl, RotatePostbackToken } from './PostbackToken';
import { StatusSyncPanel } from './StatusSyncPanel';
import { TestLeadPanel } from './TestLeadPanel';
import { DealFields } from './DealFields';
import { QualityFields } from './QualityFields';
import { EditorHeader } from '../../ui/EditorHeader';

/** /partners/new makes a partner; /partners/:id edits one. */
export default function PartnerEditor() {
  return (
    <EditorPage
      queryKey="partner"
      load={async (id) => must(await api.GET('/api/partners/{id}', { params: { path: { id } } }))}
      back={{ to: '/partners', label: 'All partners' }}
    >
      {(partner, id) => <PartnerEditorForm key={id} partner={partner} />}
    </EditorPage>
  );
}

interface Created {
  postback_url: string;
}

function PartnerEditorForm({ partner }: { partner: Partner | null }) {
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const { form, set, errors, setErrors, problem, saved, saving, guard, submit, savedAs } = useEditorForm<PartnerForm>(
    () => formOf(partner),
    inputsOf,
  );
  // Handed over by the navigation that follows creating the partner; kept in memory only and
  // dropped from the history entry at once, so a reload or "back" does not show it again.
  const [created] = useState<Created | null>(() => (location.state as { created?: Created } | null)?.created ?? null);
  // The postback URL with its secret: from creating or rotating, in memory only.
  const [postbackPath, setPostbackPath] = useState<string | null>(created?.postback_url ?? null);
  const dropped = useRef(false);
  useEffect(() => {
    if (created && !dropped.current) navigate(location.pathname, { replace: true, state: null });
    dropped.current = true;
  }, [created, location.pathname, navigate]);

  const archived = Boolean(partner?.archived_at);
  const canEdit = (whoami.data?.permissions.includes('partners:edit') ?? false) && !archived;

  function save() {
    // What the browser finds (a template that is not JSON, two headers of one name) and what the
    // API finds come back together: the save is sent either way, and refused while either has any.
    const local = localErrors(form);
    const sent = form.headers;
    const body = bodyOf(form);
    return submit(
      () =>
        partner
          ? api.PATCH('/api/partners/{id}', { params: { path: { id: partner.id } }, body })
          : api.POST('/api/partners', { body }),
      (p) => ({ errors: withLocal(local, fieldErrors(p.errors ?? [], sent)), problem: refusal(p, 'partner') }),
      async (stored) => {
        queryClient.setQueryData(['partner', stored.id], stored);
        await queryClient.invalidateQueries({ queryKey: ['partners'] });
        if (partner) return savedAs(formOf(stored));
        const postback_url = 'postback_url' in stored ? String(stored.postback_url) : '';
        navigate(`/partners/${stored.id}`, { replace: true, state: { saved: true, created: { postback_url } } });
      },
    );
  }

  return (
    <Stack>
      <EditorHeader
        title={partner ? partner.name : 'New partner'}
        testId="partner"
        actions={
          <>
            {partner && <RotatePostbackToken partner={partner} disabled={!canEdit} onRotated={setPostbackPath} />}
            {partner && (
              <DeleteButton
                what="partner"
                name={partner.name}
                remove={() => api.DELETE('/api/partners/{id}', { params: { path: { id: partner.id } } })}
                list={{ to: '/partners', queryKey: 'partners' }}
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
        {postbackPath && <PostbackUrl path={postbackPath} />}
        {archived && (
          <Alert color="gray">
            This partner is archived: it is kept for the leads delivered to it and cannot be changed.
          </Alert>
        )}
        {whoami.data && !whoami.data.permissions.includes('partners:edit') && (
          <Alert color="yellow">You can view partners but not change them.</Alert>
        )}
      </EditorHeader>
      {/* A disabled fieldset disables every input and button in it, for viewers and archived partners. */}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack>
          {!partner && canEdit && <TemplatePicker onPick={(t) => set(withTemplate(form, t))} />}
          <Group align="flex-start">
            <TextInput
              label="Name"
              value={form.name}
              onChange={(e) => set({ name: e.currentTarget.value })}
              error={errors.at('name')}
              w={320}
            />
            <StatusControl value={form.status} onChange={(status) => set({ status })} />
            <NumberInput
              label="Daily cap"
              placeholder="None"
              value={form.daily_cap}
              onChange={(v) => set({ daily_cap: v })}
              allowDecimal={false}
              error={errors.at('daily_cap')}
              w={140}
            />
            <NumberInput
              label="Hourly cap"
              placeholder="None"
              value={form.hourly_cap}
              onChange={(v) => set({ hourly_cap: v })}
              allowDecimal={false}
              error={errors.at('hourly_cap')}
              w={140}
            />
            <NumberInput
              label="Total cap"
              placeholder="None"
              value={form.total_cap}
              onChange={(v) => set({ total_cap: v })}
              allowDecimal={false}
              error={errors.at('total_cap')}
              w={140}
            />
            <NumberInput
              label="Pause after failed calls"
              description={
                partner && partner.consecutive_failures > 0
                  ? `${partner.consecutive_failures} in a row now`
                  : 'In a row; empty: never'
              }
              placeholder="Never"
              value={form.pause_after_failures}
              onChange={(v) => set({ pause_after_failures: v })}
              allowDecimal={false}
              min={1}
              error={errors.at('pause_after_failures')}
              w={200}
            />
          </Group>
          <TagsInput
            label="Countries"
            description="ISO codes (DE, AT…); empty: every country"
            value={form.countries}
            onChange={(v) => set({ countries: [...new Set(v.map((c) => c.trim().toUpperCase()))] })}
            splitChars={[',', ' ']}
            error={errors.at('countries')}
            maw={640}
          />
          <WorkingHoursFields form={form} errors={errors} set={set} />
          <DealFields form={form} errors={errors} set={set} />
          <QualityFields form={form} errors={errors} set={set} />
          <IntegrationFields form={form} errors={errors} set={set} />
          <Stack gap="xs" maw={640}>
            <Switch
              label="Track autologin links"
              description="Traffic providers get Leadgate's own link (/go/…), which records each open and redirects to this partner's URL. Needs a public base URL (Settings → Hosting); off for partners that check the referrer."
              checked={form.track_autologin}
              onChange={(e) => set({ track_autologin: e.currentTarget.checked })}
              error={errors.at('track_autologin')}
            />
            <Switch
              label="Single use"
              description="The link redirects once; later opens get a plain page without it."
              checked={form.autologin_single_use}
              disabled={!form.track_autologin}
              onChange={(e) => set({ autologin_single_use: e.currentTarget.checked })}
              error={errors.at('autologin_single_use')}
            />
          </Stack>
        </Stack>
      </fieldset>
      {canEdit && (
        <TestLeadPanel partnerId={partner?.id ?? null} form={form} onErrors={(e) => setErrors(e ?? noErrors)} />
      )}
      {partner && <StatusSyncPanel partnerId={partner.id} canEdit={canEdit} />}
    </Stack>
  );
}

function WorkingHoursFields({
  form,
  errors,
  set,
}: {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}) {
  const at = (f: string) => errors.at(`working_hours.${f}`);
  return (
    <Stack gap="xs">
      <Switch
        label="Working hours (off: leads are accepted at any time)"
        checked={form.hasHours}
        onChange={(e) => set({ hasHours: e.currentTarget.checked })}
      />
      {form.hasHours && (
        <Group align="flex-start">
          <TimezoneSelect
            value={form.timezone}
            onChange={(timezone) => set({ timezone })}
            error={at('timezone') ?? errors.at('working_hours')}
            w={220}
          />
          <Checkbox.Group label="Days" value={form.days} onChange={(days) => set({ days })} error={at('days')}>
            <Group gap="xs" mt={8}>
              {WEEKDAYS.map((d, i) => (
                <Checkbox key={d} value={String(i + 1)} label={d} />
              ))}
            </Group>
          </Checkbox.Group>
          <TextInput
            label="From"
            placeholder="HH:MM"
            value={form.from}
            onChange={(e) => set({ from: e.currentTarget.value })}
            error={at('from')}
            w={90}
          />
          <TextInput
            label="To"
            placeholder="HH:MM"
            value={form.to}
            onChange={(e) => set({ to: e.currentTarget.value })}
            error={at('to')}
            w={90}
          />
        </Group>
      )}
    </Stack>
  );
}
