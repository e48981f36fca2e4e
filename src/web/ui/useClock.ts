import { useMemo } from 'react';
import { session } from '../api/session';
import { usePortalMe } from '../portal/me';
import { useWhoami } from '../whoami';
import { clockIn, type Clock } from './clock';

/**
 * The signed-in person's clock: dates in their profile time zone (an operator's, or a provider
 * user's in the portal; UTC until it is known).
 */
export function useClock(): Clock {
  const operator = useWhoami().data?.operator.timezone;
  const provider = usePortalMe().data?.user.timezone;
  const zone = (session.kind() === 'portal' ? provider : operator) ?? 'UTC';
  return useMemo(() => clockIn(zone), [zone]);
}
