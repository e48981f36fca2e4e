import { ActionIcon, Button, Group, NumberInput, Select, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useRef, useState } from 'react';
import type { FieldErrors } from '../../ui/fields';
import type { BodyFormat, HeaderRow, Method, PartnerForm } from './form';
import { newHeader } from './form';
import { Placeholders } from './Placeholders';

interface Props {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}

const PATH_HINT = 'Dot path into the JSON answer, e.g. data.id; empty: not used';

type Target = 'url' | 'body';

/** `text` with `insert` in place of the selection of `el` (its end when it has none). */
function inserted(el: HTMLInputElement | HTMLTextAreaElement | null, text: string, insert: string) {
  const from = el?.selectionStart ?? text.length;
  const to = el?.selectionEnd ?? from;
  return { value: text.slice(0, from) + insert + text.slice(to), cursor: from + insert.length };
}

/** How leads are sent to the partner: request, headers, body template and how to read the answer. */
export function IntegrationFields({ form, errors, set }: Props) {
  const at = (f: string) => errors.at(`integration.${f}`);
  const setHeader = (key: string, patch: Partial<HeaderRow>) =>
    set({ headers: form.headers.map((h) => (h.key === key ? { ...h, ...patch } : h)) });
  // Placeholders go where the cursor was: in the URL or the body template, whichever was edited last.
  const url = useRef<HTMLInputElement>(null);
  const body = useRef<HTMLTextAreaElement>(null);
  const [target, setTarget] = useState<Target>('body');
  function insert(placeholder: string) {
    const el = target === 'url' ? url.current : body.current;
    const { value, cursor } = inserted(el, target === 'url' ? form.url : form.body, placeholder);
    set(target === 'url' ? { url: value } : { body: value });
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(cursor, cursor);
    });
  }
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
        {form.method !== 'GET' && (
          <Select
            label="Body format"
            data={[
              { value: 'json', label: 'JSON' },
              { value: 'form', label: 'Form' },
            ]}
            value={form.body_format}
            onChange={(v) => v && set({ body_format: v as BodyFormat })}
            allowDeselect={false}
            error={at('body_format')}
            w={110}
          />
        )}
        <TextInput
          label="URL"
          description="The partner's lead API. Readers see it in full: put secrets in headers."
          placeholder="https://partner.example/api/leads"
          value={form.url}
          onChange={(e) => set({ url: e.currentTarget.value })}
          onFocus={() => setTarget('url')}
          ref={url}
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
        description="What is sent to the partner, as JSON (for GET: the query string; with the form format: a form). Strings may hold {{lead.first_name}}, {{lead.email}}, {{lead.country}}… placeholders."
        value={form.body}
        onChange={(e) => set({ body: e.currentTarget.value })}
        onFocus={() => setTarget('body')}
        ref={body}
        error={at('body_template')}
        autosize
        minRows={4}
        maxRows={16}
        styles={{ input: { fontFamily: 'monospace' } }}
      />
      <Placeholders onInsert={insert} into={target === 'url' ? 'URL' : 'body template'} />
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
