import { Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { ListPage, usePagedList } from '../../ui/ListPage';
import { useWhoami } from '../../whoami';

/** /settings/webhooks: where Leadgate sends its events. */
export default function WebhookList() {
  const whoami = useWhoami();
  const hooks = usePagedList(['webhooks'], async () => must(await api.GET('/api/webhooks')));
  const canEdit = whoami.data?.permissions.includes('webhooks:edit') ?? false;
  return (
    <ListPage
      title="Webhooks"
      create={{ label: 'New webhook', to: '/settings/webhooks/new', allowed: canEdit }}
      intro="Leadgate POSTs the events you choose to each webhook, signed (Standard Webhooks), at least once and in order per lead, retrying for 24 hours. For a chat, pick the Slack or Telegram format."
      list={hooks}
      empty={<>No webhooks yet.{canEdit && ' Add one with “New webhook”.'}</>}
      testId="webhooks"
      headers={['Name', 'URL', 'Format', 'Events', 'Status']}
      wideOnly={['URL', 'Format', 'Events']}
      row={(h) => (
        <Table.Tr key={h.id} data-testid="webhook-row">
          <Table.Td>
            <Text component={Link} to={`/settings/webhooks/${h.id}`} fw={500} c="blue">
              {h.name}
            </Text>
          </Table.Td>
          <Table.Td visibleFrom="sm">
            <Text size="sm" ff="monospace">
              {h.url}
            </Text>
          </Table.Td>
          <Table.Td visibleFrom="sm">{h.format}</Table.Td>
          <Table.Td visibleFrom="sm">{h.event_types.join(', ')}</Table.Td>
          <Table.Td>
            <Badge
              color={h.status === 'active' ? (h.failing_since ? 'orange' : 'green') : 'gray'}
              data-testid="webhook-status"
            >
              {h.status === 'active' && h.failing_since ? 'failing' : h.status}
            </Badge>
          </Table.Td>
        </Table.Tr>
      )}
    />
  );
}
