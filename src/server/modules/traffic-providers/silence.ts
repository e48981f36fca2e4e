import type { DB } from '../../db/database.js';
import { emitEvent } from '../../events/emit.js';
import { watchedProviders } from './queries.js';

// A traffic provider that usually sends leads and has gone quiet: with silent_after_hours set,
// no lead for that long (or since it was made) raises traffic_provider.silent, once per silence
// (the key is its last lead's time: the next lead starts a new watch).

export async function checkSilentProviders(db: DB, now = Date.now()): Promise<number> {
  const providers = await watchedProviders(db);
  let raised = 0;
  for (const p of providers) {
    const hours = Number(p.silent_after_hours);
    const since = (p.last_lead_at as string | null) ?? p.created_at;
    if (Date.parse(since) > now - hours * 3600_000) continue;
    await emitEvent(db, {
      type: 'traffic_provider.silent',
      traffic_provider_id: p.id,
      data: { hours, last_lead_at: p.last_lead_at ?? null, name: p.name },
      dedupe_key: `traffic_provider.silent:${p.id}:${since}`,
    });
    raised++;
  }
  return raised;
}
