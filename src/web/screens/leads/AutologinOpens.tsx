import { Badge, Group, Stack, Text } from '@mantine/core';
import type { LeadDetail } from './filters';
import { useClock } from '../../ui/useClock';

/** The tracked link's opens (the partner's "Track autologin links"); nothing when the lead has no tracked link. */
export function AutologinOpens({ opens }: { opens: LeadDetail['autologin_opens'] }) {
  const clock = useClock();
  if (!opens) return null;
  return (
    <Stack gap={4} data-testid="autologin-opens">
      <Text size="sm" fw={500}>
        Tracked link opens
      </Text>
      {opens.count === 0 ? (
        <Text size="sm" c="dimmed" data-testid="autologin-opens-count">
          Not opened yet.
        </Text>
      ) : (
        <Text size="sm" data-testid="autologin-opens-count">
          Opened {opens.count} {opens.count === 1 ? 'time' : 'times'}: first {clock.dateTime(opens.first_at!)}, last{' '}
          {clock.dateTime(opens.last_at!)}
        </Text>
      )}
      {opens.recent.map((o, i) => (
        <Group key={i} gap="xs" wrap="wrap" data-testid="autologin-open">
          <Text size="xs" c="dimmed">
            {clock.dateTime(o.at)}
          </Text>
          <Text size="xs">
            {o.ip}
            {o.ip_country ? ` (${o.ip_country})` : ''}
          </Text>
          {o.country_mismatch && (
            <Badge size="xs" color="red" data-testid="autologin-open-mismatch">
              not the lead's country
            </Badge>
          )}
          {!o.redirected && (
            <Badge size="xs" color="orange">
              refused: single use
            </Badge>
          )}
          <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
            {o.user_agent}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}
