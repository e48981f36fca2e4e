import { Alert, Button, NumberInput, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, problemText, type Problem } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { EditorHeader } from '../../ui/EditorHeader';
import { fieldErrors } from '../../ui/fields';
import { useEditorForm } from '../../ui/useEditorForm';
import { useWhoami } from '../../whoami';
import type { Flag, QualitySettings } from './flags';
import { loadQualitySettings, SETTINGS_KEY } from './useFlagInfo';

/** Each flag's weight as typed ('' while the input is empty). */
type Form = Record<Flag, number | string>;

const formOf = (s: QualitySettings) => Object.fromEntries(s.flags.map((f) => [f.name, s.weights[f.name]])) as Form;

/**
 * /quality/settings: how many points each fraud flag takes off a lead's quality score. The API
 * checks the values (0–100, whole numbers); its refusal is shown at the inputs.
 */
export default function FlagWeights() {
  const settings = useQuery({ queryKey: SETTINGS_KEY, queryFn: loadQualitySettings });
  return (
    <Stack maw={760}>
      {settings.isSuccess ? (
        <WeightsForm settings={settings.data} />
      ) : (
        <>
          <Title order={1} size="h2">
            Flag weights
          </Title>
          {settings.isError ? <ErrorAlert error={settings.error} /> : <Loading />}
        </>
      )}
    </Stack>
  );
}

const weightsRefusal = (p: Problem) =>
  p.errors?.length ? 'The weights were not saved. Please correct the fields marked below.' : problemText(p);

function WeightsForm({ settings }: { settings: QualitySettings }) {
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const canEdit = whoami.data?.permissions.includes('quality:edit') ?? false;
  const { form, set, errors, problem, saved, saving, submit, savedAs } = useEditorForm(
    () => formOf(settings),
    (k) => [`weights.${k}`],
  );
  const labels = Object.fromEntries(settings.flags.map((f) => [`weights.${f.name}`, f.label]));

  function save() {
    // Only the weights changed since the page was loaded or saved: the others keep theirs.
    const weights: Partial<Record<Flag, number>> = {};
    for (const { name } of settings.flags) {
      const v = form[name];
      // Emptied: sent as is, so the API names the input instead of the UI guessing.
      if (v === '' || Number(v) !== settings.weights[name])
        weights[name] = v === '' ? (null as unknown as number) : Number(v);
    }
    return submit(
      () => api.PUT('/api/quality/settings', { body: { weights } }),
      (p) => ({ errors: fieldErrors(p.errors, { ...labels, weights: 'Weights' }), problem: weightsRefusal(p) }),
      (stored) => {
        queryClient.setQueryData(SETTINGS_KEY, stored);
        savedAs(formOf(stored));
      },
    );
  }

  const setDefaults = () =>
    set(Object.fromEntries(settings.flags.map((f) => [f.name, f.default_weight])) as Partial<Form>);

  return (
    <>
      <EditorHeader
        title="Flag weights"
        testId="flag-weights"
        actions={
          canEdit && (
            <Button variant="default" onClick={setDefaults}>
              Use default weights
            </Button>
          )
        }
        onSave={save}
        saving={saving}
        canEdit={canEdit}
        saved={saved}
        savedText="Saved. Leads that arrive from now on are scored with these weights."
        problem={problem}
      >
        {whoami.data && !canEdit && (
          <Alert color="yellow">
            You can view the weights but not change them: your role does not include quality:edit.
          </Alert>
        )}
      </EditorHeader>
      <Text size="sm">
        Intake checks every lead for fraud flags. Its quality score is 100 less the weights of the flags it raised, at
        least 0, computed when it arrives and stored with it: a change here scores the leads that arrive after it, and
        stored scores stay as they were.
      </Text>
      <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
        <Stack data-testid="flag-weights">
          {settings.flags.map((f) => (
            <NumberInput
              key={f.name}
              label={f.label}
              description={`${f.description}. Points taken off the score, 0–100 (default ${f.default_weight}).`}
              value={form[f.name]}
              onChange={(v) => set({ [f.name]: v } as Partial<Form>)}
              error={errors.at(`weights.${f.name}`)}
              allowDecimal={false}
              min={0}
              max={100}
              clampBehavior="none"
              styles={{ wrapper: { maxWidth: 140 } }}
              data-testid={`weight-${f.name}`}
            />
          ))}
        </Stack>
      </fieldset>
    </>
  );
}
