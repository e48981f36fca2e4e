import { useMemo } from 'react';
import { useWhoami } from '../whoami';
import { clockIn, type Clock } from './clock';

/** The signed-in operator's clock: dates in their profile time zone (UTC until whoami answers). */
export function useClock(): Clock {
  const zone = useWhoami().data?.operator.timezone ?? 'UTC';
  return useMemo(() => clockIn(zone), [zone]);
}
