// The flags' labels for any screen: the server's (GET /api/quality/settings) when the role holds
// quality:view, the built-in ones (flags.ts) otherwise; a role without it is never sent there.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { FLAG_FALLBACK, type Flag, type FlagInfo } from './flags';

/** The settings' query key: saving the weights refreshes the labels every screen shows. */
export const SETTINGS_KEY = ['quality-settings'];

export const loadQualitySettings = async () => must(await api.GET('/api/quality/settings'));

/** A flag's label and description (the built-in ones until the server's arrive, or if they fail). */
export function useFlagInfo(): (flag: Flag) => FlagInfo {
  const allowed = !!useWhoami().data?.permissions.includes('quality:view');
  const settings = useQuery({ queryKey: SETTINGS_KEY, enabled: allowed, queryFn: loadQualitySettings });
  const flags = allowed ? settings.data?.flags : undefined;
  return useMemo(() => {
    const byName = new Map((flags ?? []).map((f) => [f.name, f]));
    return (flag) => byName.get(flag) ?? FLAG_FALLBACK[flag] ?? { label: flag, description: '' };
  }, [flags]);
}
