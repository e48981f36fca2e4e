import { Alert, Button, Group, NumberInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { StatusControl } from '../../ui/StatusControl';
import { DeleteButton } from '../../ui/DeleteButton';
import { EditorPage } from '../../ui/EditorPage';
import { allOptions } from '../../ui/options';
import { useEditorForm, refusal } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import { bodyOf, fieldErrors, formOf, newTarget, type Flow, type TargetRow } from './form';
import { TargetsTable } from './TargetsTable';
import { SimulatePanel } from './SimulatePanel';
import { EditorHeader } from '../../ui/EditorHeader';
import { FlagRuleFields } from '../../ui/FlagRuleFields';

/** /flows/new makes a flow; /flows/:id edits one. */
export default function FlowEditor() {
  return (
    <EditorPage
      queryKey="flow"
      load={async (id) => must(await api.GET('/api/flows/{id}', { params: { path: { id } } }))}
      back={{ to: '/flows', label: 'All flows' }}
    >
      {(flow, id) => <FlowEditorForm key={id} flow={flow} />}
    </EditorPage>
  );
}

function FlowEditorForm({ flow }: { flow: Flow | null }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  // Without partners:view the list is not asked for: the targets show the names the flow carries.
  const partners = useQuery({
    queryKey: ['partners', 'all'],
    enabled: !!whoami.data?.permissions.includes('partners:view'),
    queryFn: () => allOptions('/api/partners'),
  });
  const { form, set, errors, setErrors, problem, saved, saving, guard, submit, savedAs } = useEditorForm(() =>
    formOf(flow),
  );
  // An edit of a target clears the messages on that target's row (rows are replaced when edited).
  const setTargets = (targets: TargetRow[]) => {
    const before = new Set(form.targets);
    set({ targets });
    setErrors((e) => e.without(targets.filter((r) => !before.has(r)).map((r) => `${r.key}.*`)));
  };

  // A new flow, when there is one partner only, starts with it as its target.
  const onlyPartner = !flow && partners.data?.length === 1 ? partners.data[0] : null;
  useEffect(() => {
    if (onlyPartner && form.targets.length === 0)
      set({ targets: [{ ...newTarget(1), partner_id: onlyPartner.value, partner_name: onlyPartner.label }] });
    // Once, when the partners arrive.
  }, [onlyPartner?.value]);

  const archived = Boolean(flow?.archived_at);
  const canEdit = (whoami.data?.permissions.includes('flows:edit') ?? false) && !archived;

  function save() {
    const sent = form.targets;
    const body = bodyOf(form);
    return submit(
      () =>
        flow
          ? api.PATCH('/api/flows/{id}', { params: { path: { id: flow.id } }, body })
          : api.POST('/api/flows', { body }),
      (p) => ({ errors: fieldErrors(p.errors ?? [], sent), problem: refusal(p, 'flow') }),
      async (stored) => {
        queryClient.setQueryData(['flow', stored.id], stored);
        await queryClient.invalidateQueries({ queryKey: ['flows'] });
        if (flow) savedAs(formOf(stored));
        else navigate(`/flows/${stored.id}`, { replace: true, state: { saved: true } });
      },
    );
  }

  const nextPriority = Math.max(0, ...form.targets.map((t) => Number(t.priority) || 0)) + 1;
  return (
    <Stack>
      <EditorHeader
        title={flow ? flow.name : 'New flow'}
        testId="flow"
        actions={
          <>
            {flow && (
              <DeleteButton
                what="flow"
                name={flow.name}
                remove={() => api.DELETE('/api/flows/{id}', { params: { path: { id: flow.id } } })}
                list={{ to: '/flows', queryKey: 'flows' }}
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
            This flow is archived: it is kept for the leads that went through it and cannot be changed.
          </Alert>
        )}
        {whoami.data && !whoami.data.permissions.includes('flows:edit') && (
          <Alert color="yellow">You can view flows but not change them.</Alert>
        )}
      </EditorHeader>
      {partners.isError && <Alert color="red">Partners could not be loaded: {problemText(partners.error)}</Alert>}
      {/* A disabled fieldset disables every input and button in it, for viewers and archived flows. */}
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack>
          <Group align="flex-start">
            <TextInput
              label="Name"
              value={form.name}
              onChange={(e) => set({ name: e.currentTarget.value })}
              error={errors.at('name')}
              w={320}
            />
            <NumberInput
              label="Max attempts"
              description="Partners a lead is offered to at most"
              value={form.max_attempts}
              onChange={(v) => set({ max_attempts: v })}
              allowDecimal={false}
              error={errors.at('max_attempts')}
              w={220}
            />
            <StatusControl value={form.status} onChange={(status) => set({ status })} />
          </Group>
          <Title order={2} size="h4">
            Targets
          </Title>
          <Text size="sm" c="dimmed">
            Tried in priority order (lower first); targets with the same priority share leads by weight. Empty countries
            or schedule: the partner's own.
          </Text>
          <TargetsTable rows={form.targets} partners={partners.data ?? []} errors={errors} onChange={setTargets} />
          <Group>
            <Button variant="default" onClick={() => setTargets([...form.targets, newTarget(nextPriority)])}>
              Add target
            </Button>
          </Group>
          <FlagRuleFields
            title="Review queue"
            testId="flow-review"
            flagsLabel="Hold leads flagged"
            flagsDescription="This flow's leads with any of these flags wait in the review queue instead of being routed"
            noFlags="None: no flag holds a lead"
            scoreLabel="Hold leads scoring below"
            scoreDescription="0–100; empty: no score holds a lead"
            flags={form.holdFlags}
            minScore={form.holdScore}
            onFlags={(holdFlags) => set({ holdFlags })}
            onMinScore={(holdScore) => set({ holdScore })}
            // fieldErrors (form.ts) shows a nested field at its top-level input, naming the part.
            scoreError={errors.at('review')}
          />
        </Stack>
      </fieldset>
      {flow && canEdit && <SimulatePanel flowId={flow.id} />}
    </Stack>
  );
}
