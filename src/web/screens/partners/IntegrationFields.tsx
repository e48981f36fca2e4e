import { ActionIcon, Button, Group, NumberInput, Select, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import type { FieldErrors } from '../../ui/fields';
import type { HeaderRow, Method, PartnerForm } from './form';
import { newHeader } from './form';
import { Placeholders } from './Placeholders';

interface Props {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}

const PATH_HINT = 'Dot path into the JSON answer, e.g. data.id; empty: not used';

/** How leads are sent to the partner: request, headers, body template and how to read the answer. */
export function IntegrationFields({ form, errors, set }: Props) {
  const at = (f: string) => errors.at(`integration.${f}`);
  const setHeader = (key: string, patch: Partial<HeaderRow>) =>
    set({ headers: form.headers.map((h) => (h.key === key ? { ...h, ...patch } : h)) });
  return (
    <Stack>
      <Title order={2} size="h4">
        Integration
      </Title>
      <Group align="flex-start">
        <Select
          label="Method"
          data={['POST', 'GET', 'PUT']}
          value={form.method}
          onChange={(v) => v && set({ method: v as Method })}
          allowDeselect={false}
          error={at('method')}
          w={110}
        />
        <TextInput
          label="URL"
          description="The partner's lead API. Readers see it in full: put secrets in headers."
          placeholder="https://partner.example/api/leads"
          value={form.url}
          onChange={(e) => set({ url: e.currentTarget.value })}
          error={at('url')}
          style={{ flex: 1 }}
        />
        <NumberInput
          label="Timeout (ms)"
          description="100–60000"
          value={form.timeout_ms}
          onChange={(v) => set({ timeout_ms: v })}
          allowDecimal={false}
          error={at('timeout_ms')}
          w={150}
        />
      </Group>

      <Text size="sm" fw={500}>
        Headers
      </Text>
      <Text size="sm" c="dimmed" data-testid="headers-masked-note">
        Header values are write-only: saved values come back masked (••••). Leave a masked value as it is to keep the
        stored value; type a new value to replace it.
      </Text>
      {form.headers.map((h, i) => (
        <Group key={h.key} align="flex-start" data-testid="header-row">
          <TextInput
            aria-label={`Header ${i + 1} name`}
            placeholder="X-Api-Key"
            value={h.name}
            onChange={(e) => setHeader(h.key, { name: e.currentTarget.value })}
            error={errors.at(`header:${h.key}`)}
            w={240}
          />
          <TextInput
            aria-label={`Header ${i + 1} value`}
            placeholder="value"
            value={h.value}
            onChange={(e) => setHeader(h.key, { value: e.currentTarget.value })}
            style={{ flex: 1 }}
          />
          <ActionIcon
            color="red"
            variant="light"
            mt={6}
            aria-label={`Remove header ${i + 1}`}
            onClick={() => set({ headers: form.headers.filter((x) => x.key !== h.key) })}
          >
            ✕
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button variant="default" size="xs" onClick={() => set({ headers: [...form.headers, newHeader()] })}>
          Add header
        </Button>
      </Group>

      <Textarea
        label="Body template (JSON)"
        description="The JSON sent to the partner (for GET: the query string). Strings may hold {{lead.first_name}}, {{lead.email}}, {{lead.country}}… placeholders."
        value={form.body}
        onChange={(e) => set({ body: e.currentTarget.value })}
        error={at('body_template')}
        autosize
        minRows={4}
        maxRows={16}
        styles={{ input: { fontFamily: 'monospace' } }}
      />
      <Placeholders />
      <Group align="flex-start" grow>
        <TextInput
          label="Success path"
          description={`${PATH_HINT} (any 2xx accepts)`}
          value={form.success_path}
          onChange={(e) => set({ success_path: e.currentTarget.value })}
          error={at('success_path')}
        />
        <TextInput
          label="Lead id path"
          description={PATH_HINT}
          value={form.lead_id_path}
          onChange={(e) => set({ lead_id_path: e.currentTarget.value })}
          error={at('lead_id_path')}
        />
        <TextInput
          label="Autologin path"
          description={PATH_HINT}
          value={form.autologin_path}
          onChange={(e) => set({ autologin_path: e.currentTarget.value })}
          error={at('autologin_path')}
        />
      </Group>
    </Stack>
  );
}
