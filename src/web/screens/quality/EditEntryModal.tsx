import { Alert, Button, Group, Modal, Stack, Text, TextInput, Textarea } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, problemText, type Problem } from '../../api/client';
import { noErrors, type FieldErrors } from '../../ui/fields';
import { useClock } from '../../ui/useClock';
import { dayOf, expiryOf, kindLabel, LIST_KEY, refused, scopeText, type Entry } from './entries';

/**
 * An entry's expiry and note (PATCH /api/blocklists/{id}); its value, kind and scope are what it
 * is (to change them: delete it and add another). Only what changed is sent, so an expiry set to
 * the minute through the API stays as it is when only the note changes.
 */
export function EditEntryModal({ entry, onClose }: { entry: Entry; onClose: () => void }) {
  const clock = useClock();
  const queryClient = useQueryClient();
  const initialDay = dayOf(entry.expires_at, clock.zone);
  const [expires, setExpires] = useState(initialDay);
  const [note, setNote] = useState(entry.note ?? '');
  const [errors, setErrors] = useState<FieldErrors>(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const body = {
      ...(expires !== initialDay && { expires_at: expiryOf(expires, clock.zone) }),
      ...(note.trim() !== (entry.note ?? '') && { note: note.trim() || null }),
    };
    if (!Object.keys(body).length) return onClose();
    setSaving(true);
    setProblem(null);
    try {
      const r = await api.PATCH('/api/blocklists/{id}', { params: { path: { id: entry.id } }, body });
      if (r.error !== undefined) {
        const shown = refused(r.error as Problem, ['expires_at', 'note']);
        setErrors(shown.errors);
        setProblem(shown.problem);
        return;
      }
      await queryClient.invalidateQueries({ queryKey: [LIST_KEY] });
      onClose();
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <Modal opened onClose={onClose} title={`Edit “${entry.value}”`}>
      <form onSubmit={submit} aria-label="Edit blocklist entry">
        <Stack gap="sm">
          <Text size="sm" c="dimmed">
            {kindLabel(entry.kind)} · {scopeText(entry)}
            {entry.expires_at && ` · expires ${clock.dateTime(entry.expires_at)} (${clock.zone})`}
          </Text>
          <TextInput
            label="Expires on (optional)"
            description={`It stops blocking at the end of this day (${clock.zone}); empty: never.`}
            type="date"
            value={expires}
            onChange={(e) => {
              setExpires(e.currentTarget.value);
              setErrors((x) => x.without(['expires_at']));
            }}
            error={errors.at('expires_at')}
          />
          <Textarea
            label="Note (optional)"
            value={note}
            onChange={(e) => {
              setNote(e.currentTarget.value);
              setErrors((x) => x.without(['note']));
            }}
            maxLength={500}
            autosize
            minRows={2}
            error={errors.at('note')}
          />
          {problem && (
            <Alert color="red" role="alert">
              {problem}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={saving}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
