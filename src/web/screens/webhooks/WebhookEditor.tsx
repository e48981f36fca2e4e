import {
  Alert,
  Button,
  Checkbox,
  Group,
  Modal,
  SegmentedControl,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { api, must, problemText, type Problem } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { ShownOnce } from '../../ui/ShownOnce';
import { ErrorAlert } from '../../ui/EditorPage';
import { useClock } from '../../ui/useClock';
import { useWhoami } from '../../whoami';
import { DeliveryLog } from '../events/DeliveryLog';

type Webhook = paths['/api/webhooks/{id}']['get']['responses'][200]['content']['application/json'];
type EventType = Webhook['event_types'][number];

/** /settings/webhooks/:id (or /new): the webhook's settings, its secret once, its delivery log. */
export default function WebhookEditor() {
  const { id } = useParams();
  const isNew = id === 'new';
  const hook = useQuery({
    queryKey: ['webhook', id],
    queryFn: async () => must(await api.GET('/api/webhooks/{id}', { params: { path: { id: id! } } })),
    enabled: !isNew,
  });
  if (!isNew && hook.isPending) return <Loading />;
  if (!isNew && hook.isError) return <ErrorAlert error={hook.error} />;
  return <Form hook={isNew ? null : hook.data!} />;
}

function Form({ hook }: { hook: Webhook | null }) {
  const navigate = useNavigate();
  const clock = useClock();
  const queryClient = useQueryClient();
  const whoami = useWhoami();
  const permissions = whoami.data?.permissions ?? [];
  const canEdit = permissions.includes('webhooks:edit');
  // The server's list, each with the permission it takes to read it (a webhook sends with its owner's rights).
  // Offered: the events you may read, and those the webhook already sends (shown, not changeable, when you may not read them).
  const eventTypes = useQuery({
    queryKey: ['webhook-event-types'],
    queryFn: async () => must(await api.GET('/api/webhooks/event-types')).data,
    staleTime: Infinity,
  });
  const offered = (eventTypes.data ?? []).filter(
    (e) => permissions.includes(e.permission) || hook?.event_types.includes(e.type),
  );
  const [name, setName] = useState(hook?.name ?? '');
  const [url, setUrl] = useState('');
  const [format, setFormat] = useState<Webhook['format']>(hook?.format ?? 'json');
  const [chatId, setChatId] = useState(hook?.telegram_chat_id ?? '');
  const [types, setTypes] = useState<EventType[]>(hook?.event_types ?? ['lead.ftd']);
  const [active, setActive] = useState(hook ? hook.status === 'active' : true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [tested, setTested] = useState<{ ok: boolean; text: string } | null>(null);
  const [testing, setTesting] = useState(false);
  const [secret, setSecret] = useState<{ secret: string; id: string } | null>(null);

  const fail = (e: unknown) => {
    const p = e as Problem;
    setErrors(Object.fromEntries((p.errors ?? []).map((x) => [x.field.split('/')[0], x.message])));
    setProblem(p.errors?.length ? 'Not saved: please correct the fields marked below.' : problemText(p));
  };

  async function save() {
    setProblem(null);
    setErrors({});
    setSaved(false);
    const telegram = format === 'telegram' ? chatId.trim() : undefined;
    if (!hook) {
      const r = await api.POST('/api/webhooks', {
        body: { name, url, format, event_types: types, ...(telegram ? { telegram_chat_id: telegram } : {}) },
      });
      if (r.error) return fail(r.error);
      await queryClient.invalidateQueries({ queryKey: ['webhooks'] });
      setSecret({ secret: r.data.secret, id: r.data.id });
      return;
    }
    // Only what changed: changing where or what it sends needs every one of its events to be yours to read (and makes it yours).
    const status: Webhook['status'] = active ? 'active' : 'disabled';
    const chat = format === 'telegram' ? telegram || null : null;
    const sameTypes = types.length === hook.event_types.length && types.every((t) => hook.event_types.includes(t));
    const body = {
      ...(name !== hook.name && { name }),
      ...(url && { url }),
      ...(format !== hook.format && { format }),
      ...(chat !== hook.telegram_chat_id && { telegram_chat_id: chat }),
      ...(!sameTypes && { event_types: types }),
      ...(status !== hook.status && { status }),
    };
    if (!Object.keys(body).length) return setSaved(true);
    const r = await api.PATCH('/api/webhooks/{id}', { params: { path: { id: hook.id } }, body });
    if (r.error) return fail(r.error);
    queryClient.setQueryData(['webhook', hook.id], r.data);
    await queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    setUrl('');
    setSaved(true);
  }

  async function rotate() {
    const r = await api.POST('/api/webhooks/{id}/rotate-secret', { params: { path: { id: hook!.id } } });
    if (r.error) return setProblem(problemText(r.error));
    setSecret({ secret: r.data.secret, id: hook!.id });
  }

  /** One signed test event to the receiver now; says what it answered and how fast. */
  async function sendTest() {
    setTested(null);
    setTesting(true);
    const r = await api.POST('/api/webhooks/{id}/test', { params: { path: { id: hook!.id } } });
    setTesting(false);
    if (r.error) return setProblem(problemText(r.error));
    const d = r.data;
    const took = `in ${d.duration_ms} ms`;
    setTested({
      ok: d.ok,
      text: d.ok
        ? `Test event delivered: HTTP ${d.http_status} ${took}.`
        : d.http_status !== null
          ? `Test event not accepted: HTTP ${d.http_status} ${took}.`
          : `Test event not delivered: ${d.error ?? 'no answer'} (${took}).`,
    });
  }

  async function remove() {
    if (!window.confirm(`Delete the webhook “${hook!.name}”? Its delivery log goes with it.`)) return;
    const r = await api.DELETE('/api/webhooks/{id}', { params: { path: { id: hook!.id } } });
    if (r.error) return setProblem(problemText(r.error));
    await queryClient.invalidateQueries({ queryKey: ['webhooks'] });
    navigate('/settings/webhooks');
  }

  return (
    <Stack maw={900}>
      <Group justify="space-between">
        <Title order={1} size="h2">
          {hook ? hook.name : 'New webhook'}
        </Title>
        <Button variant="default" onClick={() => navigate('/settings/webhooks')}>
          Back to webhooks
        </Button>
      </Group>
      {hook?.status === 'disabled' && hook.disabled_reason && (
        <Alert color="red" title="Disabled by Leadgate" data-testid="webhook-disabled">
          {hook.disabled_reason}. Fix the receiver, then turn the webhook on again.
        </Alert>
      )}
      {hook?.failing_since && hook.status === 'active' && (
        <Alert color="orange" data-testid="webhook-failing">
          Failing since {clock.dateTime(hook.failing_since)} ({clock.zone}): see the delivery log. After 5 days of
          failure it is disabled.
        </Alert>
      )}
      {problem && <Alert color="red" role="alert" title={problem} data-testid="webhook-errors" />}
      {saved && (
        <Alert color="green" data-testid="webhook-saved">
          Saved.
        </Alert>
      )}
      <TextInput
        label="Name"
        value={name}
        onChange={(e) => setName(e.currentTarget.value)}
        error={errors.name}
        disabled={!canEdit}
        required
      />
      <TextInput
        label="URL"
        description={
          hook
            ? `Now: ${hook.url}. Leave empty to keep it; the full URL is never shown again (it may hold a token).`
            : 'Where the events are POSTed.'
        }
        value={url}
        onChange={(e) => setUrl(e.currentTarget.value)}
        error={errors.url}
        disabled={!canEdit}
        required={!hook}
      />
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Format
        </Text>
        <SegmentedControl
          value={format}
          onChange={(v) => setFormat(v as Webhook['format'])}
          data={[
            { value: 'json', label: 'JSON' },
            { value: 'slack', label: 'Slack' },
            { value: 'telegram', label: 'Telegram' },
          ]}
          disabled={!canEdit}
        />
      </Stack>
      {format === 'telegram' && (
        <TextInput
          label="Telegram chat"
          description="A numeric chat id or @channelname; the URL is https://api.telegram.org/bot<token>/sendMessage"
          value={chatId}
          onChange={(e) => setChatId(e.currentTarget.value)}
          error={errors.telegram_chat_id}
          disabled={!canEdit}
        />
      )}
      <Checkbox.Group
        label="Events"
        description="Only events you may read are offered: a webhook sends as the operator who set it up, and stops sending an event that operator may no longer read."
        value={types}
        onChange={(v) => setTypes(v as EventType[])}
        error={errors.event_types}
      >
        <Group mt="xs">
          {offered.map((e) => (
            <Checkbox
              key={e.type}
              value={e.type}
              label={e.label}
              disabled={!canEdit || !permissions.includes(e.permission)}
            />
          ))}
        </Group>
      </Checkbox.Group>
      {hook && (
        <Switch
          label="Active"
          checked={active}
          onChange={(e) => setActive(e.currentTarget.checked)}
          disabled={!canEdit}
        />
      )}
      <Group>
        <Button onClick={() => void save()} disabled={!canEdit}>
          Save
        </Button>
        {hook && (
          <>
            <Button variant="default" onClick={() => void sendTest()} disabled={!canEdit} loading={testing}>
              Send test event
            </Button>
            <Button variant="default" onClick={() => void rotate()} disabled={!canEdit}>
              New signing secret
            </Button>
            <Button color="red" variant="light" onClick={() => void remove()} disabled={!canEdit}>
              Delete
            </Button>
          </>
        )}
      </Group>
      {tested && (
        <Alert
          color={tested.ok ? 'green' : 'red'}
          data-testid="webhook-test-result"
          closeButtonLabel="Dismiss the test result"
          withCloseButton
          onClose={() => setTested(null)}
        >
          {tested.text}
        </Alert>
      )}
      {hook && (
        <>
          <Title order={2} size="h3">
            Delivery log
          </Title>
          <DeliveryLog
            queryKey={['webhook-deliveries', hook.id]}
            load={async () =>
              must(
                await api.GET('/api/webhooks/{id}/deliveries', {
                  params: { path: { id: hook.id }, query: { limit: 50 } },
                }),
              )
            }
            loadOne={async (d) =>
              must(
                await api.GET('/api/webhooks/{id}/deliveries/{deliveryId}', {
                  params: { path: { id: hook.id, deliveryId: d } },
                }),
              )
            }
            retry={(d) =>
              api.POST('/api/webhooks/{id}/deliveries/{deliveryId}/retry', {
                params: { path: { id: hook.id, deliveryId: d } },
              })
            }
            canRetry={canEdit && hook.status === 'active'}
            testId="webhook-deliveries"
          />
        </>
      )}
      <Modal
        opened={secret !== null}
        onClose={() => {}}
        withCloseButton={false}
        title="Signing secret"
        size="lg"
        closeOnClickOutside={false}
      >
        {secret && (
          <ShownOnce
            title="Copy this secret now"
            message="It is shown only this once. The receiver uses it to check the webhook-signature header of each request (Standard Webhooks)."
            value={secret.secret}
            testId="webhook-secret"
            onDone={() => {
              const created = !hook;
              setSecret(null);
              if (created) navigate(`/settings/webhooks/${secret.id}`, { replace: true });
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}
