import { Alert, Button, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, must, problemText } from '../api/client';
import { useCanEdit, usePortalMe } from './me';
import { PortalTwoFactor } from './PortalTwoFactor';

const ZONES = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

/** The provider user's name and time zone (every date and statistic of the portal is in it). */
export default function PortalProfile() {
  const me = usePortalMe().data!;
  const canEdit = useCanEdit();
  const queryClient = useQueryClient();
  const [name, setName] = useState(me.user.name);
  const [timezone, setTimezone] = useState(me.user.timezone);
  const save = useMutation({
    mutationFn: async () =>
      must(await api.PATCH('/api/portal/me', { body: { name, timezone } }), { name: 'Name', timezone: 'Time zone' }),
    onSuccess: () => queryClient.invalidateQueries(),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    save.mutate();
  }

  return (
    <Stack maw={480}>
      <Title order={1} size="h2">
        Profile
      </Title>
      <Text size="sm">{me.user.email}</Text>
      <form onSubmit={submit}>
        <fieldset disabled={!canEdit} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
          <Stack>
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <Select
              label="Time zone"
              description="Dates, days, weeks and months are shown and counted in it"
              searchable
              data={ZONES.includes(timezone) ? ZONES : [timezone, ...ZONES]}
              value={timezone}
              onChange={(v) => v && setTimezone(v)}
              allowDeselect={false}
            />
            {save.isError && (
              <Alert color="red" role="alert">
                {problemText(save.error)}
              </Alert>
            )}
            {save.isSuccess && (
              <Alert color="green" data-testid="profile-saved">
                Saved.
              </Alert>
            )}
            {canEdit && (
              <Button type="submit" loading={save.isPending} w="fit-content">
                Save
              </Button>
            )}
          </Stack>
        </fieldset>
      </form>
      {canEdit && me.via === 'session' && <PortalTwoFactor />}
    </Stack>
  );
}
