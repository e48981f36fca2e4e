// The records a scoped reader may name (db/scope.ts narrows lead-shaped rows; this, the records
// themselves): a traffic provider, a partner, a campaign (its provider's). An operator whose role
// is limited to some traffic providers and/or partners sees only those, in lists and by id (404
// otherwise); a dimension the scope leaves open (null) is not narrowed.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { DataScope } from './scope.js';

export const providerInScope = (scope: DataScope, id: string) =>
  scope.trafficProviderIds === null || scope.trafficProviderIds.includes(id);

export const partnerInScope = (scope: DataScope, id: string) =>
  scope.partnerIds === null || scope.partnerIds.includes(id);

/** `column in (ids)` for a scope's list (false for an empty one), or null when the list is open. */
function idIn(column: string, ids: readonly string[] | null): Expression<SqlBool> | null {
  if (ids === null) return null;
  if (ids.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(ids.map((id) => sql`${id}`))})`;
}

/** The condition on a traffic provider's id column (e.g. 'traffic_providers.id', 'campaigns.traffic_provider_id'). */
export const providerIdInScope = (scope: DataScope, column: string) => idIn(column, scope.trafficProviderIds);

/** The condition on a partner's id column (e.g. 'partners.id'). */
export const partnerIdInScope = (scope: DataScope, column: string) => idIn(column, scope.partnerIds);
