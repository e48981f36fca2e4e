import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Indicator,
  Popover,
  ScrollArea,
  Stack,
  Text,
  UnstyledButton,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useClock } from '../../ui/useClock';
import { ZoneNote } from '../../ui/ZoneNote';
import { notificationLink } from './links';

/**
 * The header's bell: alerts (caps, failing partners and pulls, disabled webhooks) with the unread
 * count, read on demand; each alert is a link to what it is about.
 */
export function NotificationBell() {
  const { dateTime: time } = useClock();
  const queryClient = useQueryClient();
  const [opened, setOpened] = useState(false);
  const notes = useQuery({
    queryKey: ['notifications'],
    queryFn: async () =>
      must(await api.GET('/api/notifications', { params: { query: { limit: 30, unread_only: false } } })),
    refetchInterval: 30_000,
  });
  const unread = notes.data?.unread_count ?? 0;

  async function markRead() {
    const newest = notes.data?.data[0]?.id;
    await api.POST('/api/notifications/read', { body: newest ? { up_to: newest } : {} });
    await queryClient.invalidateQueries({ queryKey: ['notifications'] });
  }

  return (
    <Popover
      width="min(380px, calc(100vw - 16px))"
      position="bottom-end"
      shadow="md"
      opened={opened}
      onChange={setOpened}
    >
      {/* The button itself is the popover's target (it carries aria-expanded); the count sits on it. */}
      <Indicator
        label={unread > 99 ? '99+' : unread}
        size={16}
        disabled={unread === 0}
        data-testid="notifications-unread"
      >
        <Popover.Target>
          <ActionIcon
            variant="default"
            size="lg"
            aria-label={unread ? `Notifications: ${unread} unread` : 'Notifications'}
            data-testid="notifications-bell"
            onClick={() => setOpened((o) => !o)}
          >
            <svg
              width="18"
              height="18"
              viewBox="0 0 24 24"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
              aria-hidden="true"
            >
              <path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
              <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
            </svg>
          </ActionIcon>
        </Popover.Target>
      </Indicator>
      <Popover.Dropdown>
        <Stack gap="xs" data-testid="notifications">
          <Group justify="space-between">
            <Text fw={600}>Notifications</Text>
            <Button
              size="compact-xs"
              variant="subtle"
              onClick={() => void markRead()}
              disabled={unread === 0}
              data-testid="notifications-read"
            >
              Mark all read
            </Button>
          </Group>
          <ZoneNote />
          {notes.data?.data.length ? (
            <ScrollArea.Autosize mah={360}>
              <Stack gap="xs">
                {notes.data.data.map((n) => {
                  const to = notificationLink(n);
                  const body = (
                    <>
                      <Group gap={6} wrap="nowrap">
                        {n.unread && (
                          <Badge size="xs" color="blue">
                            new
                          </Badge>
                        )}
                        <Text size="sm" c={to ? 'blue' : undefined}>
                          {n.text}
                        </Text>
                      </Group>
                      <Text size="xs" c="dimmed">
                        {time(n.occurred_at)}
                      </Text>
                    </>
                  );
                  return to ? (
                    <UnstyledButton
                      key={n.id}
                      component={Link}
                      to={to}
                      onClick={() => setOpened(false)}
                      p={4}
                      style={{ borderRadius: 4, minHeight: 44 }}
                      data-testid="notification"
                    >
                      {body}
                    </UnstyledButton>
                  ) : (
                    <Stack key={n.id} gap={0} p={4} data-testid="notification">
                      {body}
                    </Stack>
                  );
                })}
              </Stack>
            </ScrollArea.Autosize>
          ) : (
            <Text size="sm" c="dimmed" data-testid="notifications-empty">
              Nothing to report.
            </Text>
          )}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
