import { Alert, Button, Group, Modal, Select, Stack, Text, TextInput, Textarea } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import { noErrors, type FieldErrors } from '../../ui/fields';
import { useClock } from '../../ui/useClock';
import {
  expiryOf,
  GLOBAL,
  KIND_OPTIONS,
  KINDS,
  LIST_KEY,
  refused,
  useProviderChoice,
  type Entry,
  type Kind,
  type ProviderChoice,
} from './entries';

/** The provider picker of the forms: "Global" first when the role may make global entries. */
export function ProviderSelect({
  choice,
  value,
  onChange,
  label,
  description,
  error,
}: {
  choice: ProviderChoice;
  value: string | null;
  onChange: (v: string | null) => void;
  label: string;
  description?: string;
  error?: string;
}) {
  const data = [...(choice.global ? [{ value: GLOBAL, label: 'Global (every provider)' }] : []), ...choice.options];
  return (
    <Select
      label={label}
      description={description}
      data={data}
      value={value ?? (choice.global ? GLOBAL : null)}
      onChange={(v) => onChange(v === GLOBAL ? null : v)}
      placeholder="Choose a traffic provider"
      searchable
      allowDeselect={false}
      required={!choice.global}
      error={error}
    />
  );
}

/** Add entry: a value of a kind, globally or for one provider, with an optional expiry and note (POST /api/blocklists). */
export function EntryForm({ onClose, onAdded }: { onClose: () => void; onAdded: (entry: Entry) => void }) {
  const clock = useClock();
  const queryClient = useQueryClient();
  const providers = useProviderChoice();
  const [kind, setKind] = useState<Kind>('email');
  const [value, setValue] = useState('');
  const [provider, setProvider] = useState<string | null>(null);
  const [expires, setExpires] = useState('');
  const [note, setNote] = useState('');
  const [errors, setErrors] = useState<FieldErrors>(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // A role limited to some providers has no global entries: its first provider until it picks one.
  const providerId = provider ?? (providers.global ? null : (providers.options[0]?.value ?? null));
  const shownInputs = ['kind', 'value', 'expires_at', 'note', ...(providers.shown ? ['traffic_provider_id'] : [])];

  const edited = (input: string) => {
    setErrors((e) => e.without([input]));
    setProblem(null);
  };

  async function submit(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setProblem(null);
    try {
      const r = await api.POST('/api/blocklists', {
        body: {
          kind,
          value,
          traffic_provider_id: providerId,
          expires_at: expiryOf(expires, clock.zone),
          note: note.trim() || null,
        },
      });
      if (r.error !== undefined) {
        const shown = refused(r.error as Problem, shownInputs);
        setErrors(shown.errors);
        setProblem(shown.problem);
        return;
      }
      await queryClient.invalidateQueries({ queryKey: [LIST_KEY] });
      onAdded(r.data);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  const hint = KINDS.find((k) => k.value === kind)?.hint;
  return (
    <Modal opened onClose={onClose} title="Add blocklist entry" size="lg">
      <form onSubmit={submit} aria-label="Add blocklist entry" data-testid="entry-form">
        <Stack gap="sm">
          <Select
            label="Kind"
            data={KIND_OPTIONS}
            value={kind}
            onChange={(v) => {
              setKind((v as Kind) ?? 'email');
              edited('kind');
              edited('value');
            }}
            allowDeselect={false}
            required
            error={errors.at('kind')}
          />
          <TextInput
            label="Value"
            description={hint}
            value={value}
            onChange={(e) => {
              setValue(e.currentTarget.value);
              edited('value');
            }}
            required
            error={errors.at('value')}
          />
          {providers.shown ? (
            <ProviderSelect
              choice={providers}
              label="Traffic provider"
              description="Global blocks the leads of every provider; a provider's entry blocks only its leads."
              value={providerId}
              onChange={(v) => {
                setProvider(v);
                edited('traffic_provider_id');
              }}
              error={errors.at('traffic_provider_id')}
            />
          ) : (
            <Text size="sm" c="dimmed">
              The entry is global: it blocks the leads of every traffic provider.
            </Text>
          )}
          <TextInput
            label="Expires on (optional)"
            description={`It stops blocking at the end of this day (${clock.zone}); empty: never.`}
            type="date"
            value={expires}
            onChange={(e) => {
              setExpires(e.currentTarget.value);
              edited('expires_at');
            }}
            error={errors.at('expires_at')}
          />
          <Textarea
            label="Note (optional)"
            description="Why it is listed; at most 500 characters."
            value={note}
            onChange={(e) => {
              setNote(e.currentTarget.value);
              edited('note');
            }}
            maxLength={500}
            autosize
            minRows={2}
            error={errors.at('note')}
          />
          {problem && (
            <Alert color="red" role="alert" data-testid="entry-form-error">
              {problem}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={saving} disabled={!value.trim() || (!providers.global && !providerId)}>
              Add entry
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
