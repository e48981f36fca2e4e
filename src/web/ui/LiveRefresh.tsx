import { Button, Group, Text } from '@mantine/core';
import { useState } from 'react';
import { LIVE_INTERVAL_MS } from './liveInterval';
import { useClock } from './useClock';

/**
 * Live numbers on a screen (Leads, Overview): its queries refetch every LIVE_INTERVAL_MS while the
 * tab is visible (react-query stops polling in a background tab), unless the operator pauses;
 * the pause is remembered per screen in this browser. One refresh is one request per query on
 * the screen, so an open tab costs a few requests a minute.
 */
export { LIVE_INTERVAL_MS };

const storageKey = (screen: string) => `leadgate.live-paused.${screen}`;

function storedPause(screen: string): boolean {
  try {
    return localStorage.getItem(storageKey(screen)) === '1';
  } catch {
    return false;
  }
}

/** Whether live refresh is paused on this screen, and a setter that remembers it. */
export function useLivePause(screen: string): [boolean, (paused: boolean) => void] {
  const [paused, setPaused] = useState(() => storedPause(screen));
  return [
    paused,
    (next: boolean) => {
      setPaused(next);
      try {
        localStorage.setItem(storageKey(screen), next ? '1' : '0');
      } catch {
        // Storage refused (private mode, quota): the pause holds for this page only.
      }
    },
  ];
}

/** The react-query options of a live query. */
export function liveQueryOptions(paused: boolean) {
  return { refetchInterval: paused ? (false as const) : LIVE_INTERVAL_MS, refetchIntervalInBackground: false };
}

interface Props {
  /** When the data shown was fetched (react-query's dataUpdatedAt; 0 before the first answer). */
  updatedAt: number;
  fetching: boolean;
  paused: boolean;
  onPausedChange: (paused: boolean) => void;
  onRefresh: () => void;
}

/** "Updated 14:02:11 · Refresh · Pause": what the operator sees of live refresh, and its controls. */
export function LiveStatus({ updatedAt, fetching, paused, onPausedChange, onRefresh }: Props) {
  const clock = useClock();
  return (
    <Group gap="xs" wrap="nowrap" data-testid="live-status">
      <Text size="sm" c="dimmed" data-testid="live-updated" data-updated-at={updatedAt || undefined}>
        {updatedAt ? `Updated ${clock.time(updatedAt)} (${clock.zone})` : 'Loading…'}
        {paused ? ' · paused' : ''}
      </Text>
      <Button size="compact-sm" variant="default" onClick={onRefresh} loading={fetching} data-testid="live-refresh">
        Refresh
      </Button>
      <Button
        size="compact-sm"
        variant="default"
        onClick={() => onPausedChange(!paused)}
        aria-pressed={paused}
        data-testid="live-pause"
        title={paused ? 'Refresh on its own every 30 seconds again' : 'Stop refreshing on its own'}
      >
        {paused ? 'Resume' : 'Pause'}
      </Button>
    </Group>
  );
}
