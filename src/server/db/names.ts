// Names for a page of audit entries: who acted and what they acted on, as people read them.
// One query per kind of target on the page (ids in one IN list, a page is at most 500 entries).
// A record deleted since keeps the name its entry recorded (details.name, or an operator's
// details.email), else null.
import type { DB } from './database.js';

type Named = 'operator' | 'partner' | 'flow' | 'campaign' | 'traffic_provider' | 'role' | 'api_key' | 'lead';

const TABLES: Record<
  Named,
  'operators' | 'partners' | 'flows' | 'campaigns' | 'traffic_providers' | 'roles' | 'api_keys' | 'leads'
> = {
  operator: 'operators',
  partner: 'partners',
  flow: 'flows',
  campaign: 'campaigns',
  traffic_provider: 'traffic_providers',
  role: 'roles',
  api_key: 'api_keys',
  lead: 'leads',
};

interface Entry {
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

/** id → name of `type`, one query for all the ids (none for no ids). */
export async function namesOf(db: DB, type: Named, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!ids.length) return out;
  if (type === 'lead') {
    // A lead's name, never its contacts (those are masked by rule 16).
    const rows = await db
      .selectFrom('leads')
      .select(['id', 'first_name', 'last_name'])
      .where('id', 'in', ids)
      .execute();
    for (const r of rows) out.set(r.id, `${r.first_name} ${r.last_name}`.trim());
    return out;
  }
  const rows = await db.selectFrom(TABLES[type]).select(['id', 'name']).where('id', 'in', ids).execute();
  for (const r of rows) out.set(r.id, r.name);
  return out;
}

/**
 * The entries with actor_name and target_name (null when there is no name to give). A lead's
 * name only for a caller who may see leads (`leadNames`): the audit log alone does not open them.
 */
export async function withNames<E extends Entry>(
  db: DB,
  entries: E[],
  leadNames: boolean,
): Promise<(E & { actor_name: string | null; target_name: string | null })[]> {
  const wanted = new Map<Named, Set<string>>();
  const want = (type: Named, id: string | null) => {
    if (id) (wanted.get(type) ?? wanted.set(type, new Set()).get(type)!).add(id);
  };
  for (const e of entries) {
    want('operator', e.actor_id);
    if (e.target_type && e.target_type in TABLES && (e.target_type !== 'lead' || leadNames))
      want(e.target_type as Named, e.target_id);
  }
  const found = new Map<Named, Map<string, string>>();
  for (const [type, ids] of wanted) found.set(type, await namesOf(db, type, [...ids]));

  return entries.map((e) => {
    const recorded =
      typeof e.details.name === 'string'
        ? e.details.name
        : typeof e.details.email === 'string' && e.target_type === 'operator'
          ? e.details.email
          : null;
    let target: string | null = null;
    if (e.target_type === 'backup')
      target = e.target_id; // a backup's id is its file name
    else if (e.target_type === 'lead')
      target = leadNames && e.target_id ? (found.get('lead')?.get(e.target_id) ?? null) : null;
    else if (e.target_type && e.target_id) target = found.get(e.target_type as Named)?.get(e.target_id) ?? recorded;
    return {
      ...e,
      actor_name: (e.actor_id && found.get('operator')?.get(e.actor_id)) || null,
      target_name: target || null,
    };
  });
}
