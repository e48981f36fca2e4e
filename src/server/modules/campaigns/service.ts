import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { invalid, type FieldError } from '../../http/errors.js';
import { referenced } from './queries.js';
import { priceErrors, storedPrice } from '../../distribution/prices.js';

export function storedPayout(p: { model: 'cpl' | 'cpa'; amount: number; by_country?: Record<string, number> }): string {
  const errors = priceErrors(p, 'payout');
  if (errors.length) invalid(errors);
  return JSON.stringify(storedPrice(p));
}

/**
 * The provider and flow a campaign is given must exist and not be archived; each bad one is
 * named. Values equal to `current` are not new references and are not checked again.
 */
export async function checkReferences(
  db: Kysely<Database>,
  refs: { traffic_provider_id?: string; flow_id?: string | null; payout?: object },
  current?: { traffic_provider_id: string; flow_id: string | null },
) {
  const errors = await referenceErrors(db, refs, current);
  if (errors.length) invalid(errors);
}

/**
 * The same checks as errors, on a body that may not have passed its schema (route config
 * moreChecks): a value of the wrong type is skipped, the schema names it.
 */
export async function referenceErrors(
  db: Kysely<Database>,
  refs: { traffic_provider_id?: unknown; flow_id?: unknown; payout?: unknown },
  current?: { traffic_provider_id: string; flow_id: string | null },
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  errors.push(...priceErrors(refs.payout, 'payout'));
  const check = async (
    field: 'traffic_provider_id' | 'flow_id',
    table: 'traffic_providers' | 'flows',
    id: unknown,
    what: string,
  ) => {
    if (typeof id !== 'string' || id === current?.[field]) return;
    const row = await referenced(db, table, id);
    if (!row) errors.push({ field, message: `no ${what} with that id` });
    else if (row.archived_at) errors.push({ field, message: `the ${what} is archived` });
  };
  await check('traffic_provider_id', 'traffic_providers', refs.traffic_provider_id, 'traffic provider');
  await check('flow_id', 'flows', refs.flow_id, 'flow');
  return errors;
}
