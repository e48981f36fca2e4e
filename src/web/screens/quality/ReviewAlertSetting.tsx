import { Button, Group, NumberInput, Switch, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, problemText } from '../../api/client';
import { SETTINGS_KEY } from './useFlagInfo';

/**
 * The review queue's alert (quality settings review_alert_minutes): a notification when a lead
 * has waited longer than this. Set here, beside the queue; read-only without quality:edit.
 */
export function ReviewAlertSetting({ minutes, canEdit }: { minutes: number | null; canEdit: boolean }) {
  const queryClient = useQueryClient();
  const [on, setOn] = useState(minutes !== null);
  const [value, setValue] = useState<number | string>(minutes ?? 60);
  const [state, setState] = useState<{ saving: boolean; error: string | null; saved: boolean }>({
    saving: false,
    error: null,
    saved: false,
  });

  async function save() {
    setState({ saving: true, error: null, saved: false });
    const review_alert_minutes = on ? (value === '' ? (null as unknown as number) : Number(value)) : null;
    const res = await api.PUT('/api/quality/settings', { body: { review_alert_minutes } });
    if (res.error || !res.data) {
      const p = res.error as { errors?: { message: string }[] } | undefined;
      setState({ saving: false, error: p?.errors?.[0]?.message ?? problemText(res.error), saved: false });
      return;
    }
    queryClient.setQueryData(SETTINGS_KEY, res.data);
    await queryClient.invalidateQueries({ queryKey: ['review-queue'] });
    setState({ saving: false, error: null, saved: true });
  }

  if (!canEdit)
    return (
      <Text size="sm" c="dimmed" data-testid="review-alert">
        {minutes === null
          ? 'No alert is raised for leads waiting in the queue.'
          : `A notification is raised when a lead has waited more than ${minutes} minutes.`}
      </Text>
    );
  return (
    <Group align="flex-end" gap="sm" data-testid="review-alert">
      <Switch
        label="Alert when a lead waits longer than"
        checked={on}
        onChange={(e) => {
          setOn(e.currentTarget.checked);
          setState({ saving: false, error: null, saved: false });
        }}
      />
      <NumberInput
        aria-label="Minutes a lead may wait before the alert"
        value={value}
        onChange={(v) => {
          setValue(v);
          setState({ saving: false, error: null, saved: false });
        }}
        disabled={!on}
        allowDecimal={false}
        min={1}
        max={10_080}
        clampBehavior="none"
        suffix=" min"
        error={state.error}
        styles={{ wrapper: { maxWidth: 120 } }}
      />
      <Button variant="default" onClick={save} loading={state.saving}>
        Save
      </Button>
      {state.saved && (
        <Text size="sm" c="green">
          Saved.
        </Text>
      )}
    </Group>
  );
}
