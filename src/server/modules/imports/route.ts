import type { Static } from 'typebox';
import type { DB } from '../../db/database.js';
import type { FieldError } from '../../http/errors.js';
import type { Principal } from '../../types.js';
import { isLiveFlow, livePartnerCountries } from '../leads/queries.js';
import type { RunBody } from './schemas.js';

/** Where an import of mode route sends its leads: the re-injection job made when it is done. */
export interface ImportRoute {
  flow_id?: string;
  partner_ids?: string[];
  per_minute: number;
}

/**
 * The run's route, checked as a re-injection job's target is (injections/service.ts checkJob):
 * a flow or partners (not archived; a role limited to some partners names only those, never a
 * flow) and a pace. Errors are added to `errors`; null for mode store.
 */
export async function checkRoute(
  db: DB,
  principal: Principal,
  body: Static<typeof RunBody>,
  errors: FieldError[],
): Promise<ImportRoute | null> {
  const { flow_id, partner_ids, per_minute } = body;
  if (body.mode === 'store') {
    for (const [field, v] of Object.entries({ flow_id, partner_ids, per_minute }))
      if (v !== undefined) errors.push({ field, message: 'is for mode route only (mode store sends nothing)' });
    return null;
  }
  const partnerScope = principal.scope.partnerIds;
  if (flow_id !== undefined && partner_ids !== undefined)
    errors.push({ field: 'partner_ids', message: 'must not be sent together with flow_id: choose a flow or partners' });
  else if (flow_id === undefined && partner_ids === undefined)
    errors.push({ field: 'flow_id', message: 'or partner_ids is required for mode route: where the leads go' });
  if (partnerScope !== null && flow_id !== undefined)
    errors.push({
      field: 'flow_id',
      message: 'is not allowed: your role is limited to some partners; use partner_ids',
    });
  else if (flow_id !== undefined && !(await isLiveFlow(db, flow_id)))
    errors.push({ field: 'flow_id', message: 'names no flow (or an archived one)' });
  for (const [i, id] of (partner_ids ?? []).entries()) {
    const known = (partnerScope === null || partnerScope.includes(id)) && (await livePartnerCountries(db, id)) !== null;
    if (!known) errors.push({ field: `partner_ids[${i}]`, message: `"${id}" names no partner (or an archived one)` });
  }
  if (per_minute === undefined) errors.push({ field: 'per_minute', message: 'is required for mode route' });
  return { ...(flow_id !== undefined ? { flow_id } : { partner_ids }), per_minute: per_minute ?? 0 };
}
