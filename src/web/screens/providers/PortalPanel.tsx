import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { api, must, problemText } from '../../api/client';
import { viewAsUrl } from '../../portal/viewAs';
import { useWhoami } from '../../whoami';
import { PortalSettings } from './PortalSettings';
import { PortalUsers } from './PortalUsers';

/**
 * The traffic provider editor's Portal section: who may sign in to the provider's portal, their
 * keys, and "View as provider" (the portal in a new tab, read only, audited).
 */
export function PortalPanel({ providerId, canEdit }: { providerId: string; canEdit: boolean }) {
  const permissions = useWhoami().data?.permissions ?? [];
  const mayViewAs = permissions.includes('traffic_providers:edit') && permissions.includes('leads:view');
  const viewAs = useMutation({
    mutationFn: async () => {
      // Opened first (a click's window is not blocked), then pointed at the portal once the token is
      // here; the token travels after # so no server logs it, and the tab gets no opener.
      const tab = window.open('about:blank', '_blank');
      try {
        const { token } = must(
          await api.POST('/api/traffic-providers/{id}/view-as', { params: { path: { id: providerId } } }),
        );
        if (!tab) throw new Error('The browser blocked the new tab: allow pop-ups for this site and try again.');
        tab.opener = null;
        tab.location.href = viewAsUrl(token);
      } catch (err) {
        tab?.close();
        throw err;
      }
    },
  });

  return (
    <Card withBorder>
      <Stack gap="sm" data-testid="portal-panel">
        <Group justify="space-between">
          <Title order={2} size="h3">
            Portal
          </Title>
          {mayViewAs && (
            <Button variant="default" onClick={() => viewAs.mutate()} loading={viewAs.isPending}>
              View as provider
            </Button>
          )}
        </Group>
        <Text size="sm" c="dimmed">
          The provider&apos;s own users sign in on this site&apos;s sign-in page and see only this provider&apos;s
          leads, statistics and integration.
        </Text>
        {viewAs.isError && (
          <Alert color="red" role="alert">
            {problemText(viewAs.error)}
          </Alert>
        )}
        <PortalSettings providerId={providerId} canEdit={canEdit} />
        <PortalUsers providerId={providerId} canEdit={canEdit} />
      </Stack>
    </Card>
  );
}
