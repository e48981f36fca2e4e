import { useQuery } from '@tanstack/react-query';
import { api, must } from './api/client';

/** The signed-in operator and their effective permissions (what buttons to offer). */
export function useWhoami() {
  return useQuery({ queryKey: ['whoami'], queryFn: async () => must(await api.GET('/api/auth/whoami')) });
}
