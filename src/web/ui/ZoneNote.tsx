import { Text } from '@mantine/core';
import { useClock } from './useClock';

/** Names the zone the dates beside it are shown in, once per screen or panel rather than on every cell. */
export function ZoneNote({ zone }: { zone?: string }) {
  const clock = useClock();
  return (
    <Text size="xs" c="dimmed" data-testid="zone-note">
      Times in {zone ?? clock.zone}
    </Text>
  );
}
