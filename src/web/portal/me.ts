import { useQuery } from '@tanstack/react-query';
import { api, must, session } from '../api/client';

/** The portal's caller: its user, provider, scopes and what the portal shows (only with a portal session). */
export function usePortalMe() {
  return useQuery({
    queryKey: ['portal-me'],
    enabled: session.kind() === 'portal',
    queryFn: async () => must(await api.GET('/api/portal/me')),
  });
}

/** Whether the caller may change things: a portal:edit session, never an operator viewing as the provider. */
export function useCanEdit(): boolean {
  const me = usePortalMe().data;
  return Boolean(me && !me.view_as && me.scopes.includes('portal:edit'));
}
