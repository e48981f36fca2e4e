// A role limited to some traffic providers and/or partners (issue 27 item 5): its API shape and
// the checks made when one is granted. Whose data a scoped principal reads is decided by
// db/scope.ts at each module's query layer; here only what a role may be given.
import type { Kysely } from 'kysely';
import type { Permission } from '../../auth/permissions.js';
import type { DataScope } from '../../db/scope.js';
import type { Database } from '../../db/tables.js';
import { HttpProblem, invalid, type FieldError } from '../../http/errors.js';
import type { Principal } from '../../types.js';
import { idsThatExist } from './queries.js';

export { scopeOf } from './queries.js';

export interface RoleScopeInput {
  traffic_provider_ids?: string[] | null;
  partner_ids?: string[] | null;
}

/**
 * Permissions that reach the whole account and cannot be narrowed to some providers or partners:
 * the audit log, webhooks (a standing read of every event) and editing flows (a flow decides
 * where every provider's leads go). A scoped role holds none.
 */
export const ACCOUNT_WIDE: readonly Permission[] = ['audit:view', 'webhooks:view', 'webhooks:edit', 'flows:edit'];

const json = (ids: readonly string[] | null | undefined) => (ids == null ? null : JSON.stringify([...new Set(ids)]));

/** The stored columns of a scope (null: all). */
export const scopeColumns = (s: RoleScopeInput) => ({
  scope_traffic_provider_ids: json(s.traffic_provider_ids),
  scope_partner_ids: json(s.partner_ids),
});

const isScoped = (s: RoleScopeInput) => s.traffic_provider_ids != null || s.partner_ids != null;

/** `inner` reads no more than `outer` (null: everything). */
const within = (inner: readonly string[] | null | undefined, outer: readonly string[] | null) =>
  outer === null || (inner != null && inner.every((id) => outer.includes(id)));

/**
 * 400 naming the field for unknown ids and for account-wide permissions in a scoped role; 403
 * when the caller, itself scoped, would grant a wider scope than its own (as no one grants a
 * permission they do not hold).
 */
export async function checkRoleScope(
  db: Kysely<Database>,
  p: Principal,
  scope: RoleScopeInput,
  permissions: readonly string[],
) {
  const errors: FieldError[] = [];
  for (const [field, table] of [
    ['traffic_provider_ids', 'traffic_providers'],
    ['partner_ids', 'partners'],
  ] as const) {
    const ids = scope[field];
    if (!ids?.length) continue;
    const known = new Set(await idsThatExist(db, table, ids));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length)
      errors.push({ field: `scope.${field}`, message: `names no such record: ${unknown.join(', ')}` });
  }
  const wide = isScoped(scope) ? permissions.filter((x) => ACCOUNT_WIDE.includes(x as Permission)) : [];
  if (wide.length) {
    errors.push({
      field: 'permissions',
      message: `cannot hold ${wide.join(', ')} in a role limited by scope: they read the whole account`,
    });
  }
  if (errors.length) invalid(errors);
  assertScopeHeld(p.scope, scope);
}

/** 403 unless `scope` reads no more than the caller's own scope. */
export function assertScopeHeld(mine: DataScope, scope: RoleScopeInput) {
  if (within(scope.traffic_provider_ids, mine.trafficProviderIds) && within(scope.partner_ids, mine.partnerIds)) return;
  throw new HttpProblem(403, 'forbidden', 'You cannot grant a scope wider than your own role’s.');
}

/**
 * A role limited to some traffic providers (or partners) adds none: the new one would be out of
 * its own scope at once. An operator whose role is open in that dimension adds them.
 */
export function assertMayAdd(scope: DataScope, what: 'traffic provider' | 'partner') {
  const limited = what === 'partner' ? scope.partnerIds : scope.trafficProviderIds;
  if (limited === null) return;
  throw new HttpProblem(
    403,
    'forbidden',
    `Your role is limited to some ${what}s, so you cannot add one; an operator whose role sees every ${what} can.`,
  );
}
