import { Alert, Button, Card, Group, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, problemText } from '../../api/client';
import { useUnsavedGuard } from '../../ui/useUnsavedGuard';
import { HOSTING_KEY } from './shared';

/** The address links are built from; empty clears it (links stay paths on this dashboard's address). */
export function PublicUrlForm({ current, canEdit }: { current: string | null; canEdit: boolean }) {
  const queryClient = useQueryClient();
  const guard = useUnsavedGuard();
  const [value, setValue] = useState(current ?? '');
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  const dirty = value.trim() !== (current ?? '');

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setError(null);
    setSaved(false);
    try {
      const r = await api.PUT('/api/hosting/public-url', { body: { public_base_url: value.trim() || null } });
      if (r.error) {
        setError(r.error.errors?.find((f) => f.field.endsWith('public_base_url'))?.message ?? problemText(r.error));
        return;
      }
      guard.markClean();
      setValue(r.data.public_base_url ?? ''); // shown as stored: lower-case host, no trailing slash
      await queryClient.invalidateQueries({ queryKey: HOSTING_KEY });
      setSaved(true);
    } catch (err) {
      setError(problemText(err));
    } finally {
      setSaving(false);
    }
  }

  return (
    <Card withBorder>
      <form onSubmit={save}>
        <Title order={2} size="h4" mb="xs">
          Public base URL
        </Title>
        <Text size="sm" mb="sm">
          The address partners and traffic providers reach this server at. When set, the postback URLs handed to
          partners are full links under it; when empty, they are paths to put after this dashboard's own address.
        </Text>
        {saved && (
          <Alert color="green" mb="sm" data-testid="public-url-saved">
            Saved.
          </Alert>
        )}
        <Group align="flex-start">
          <TextInput
            aria-label="Public base URL"
            placeholder="https://leads.example.com"
            value={value}
            onChange={(e) => {
              guard.markDirty();
              setSaved(false);
              setValue(e.currentTarget.value);
            }}
            error={error}
            disabled={!canEdit}
            w={420}
          />
          <Button type="submit" loading={saving} disabled={!canEdit || !dirty}>
            Save
          </Button>
        </Group>
      </form>
    </Card>
  );
}
