import { useQuery } from '@tanstack/react-query';
import { api, must, session } from './api/client';

/**
 * The signed-in operator and their effective permissions (what buttons to offer). Never asked
 * with a portal session: the operators' routes answer it 401, which would end the session.
 */
export function useWhoami() {
  return useQuery({
    queryKey: ['whoami'],
    enabled: session.kind() !== 'portal',
    queryFn: async () => must(await api.GET('/api/auth/whoami')),
  });
}
