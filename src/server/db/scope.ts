// Whose data a reader may see: the one place that narrows every lead-shaped read (leads, their
// attempts and events, reports, exports, cap figures). A traffic provider's portal user reads
// through its provider's scope; an operator whose role is limited to some traffic providers and/or
// partners reads through the role's scope; everyone else is UNSCOPED. Queries take a DataScope
// and call these helpers; handlers never filter rows themselves.
import { sql, type Expression, type SqlBool } from 'kysely';

export interface DataScope {
  /** Only leads from these traffic providers; null: any provider. */
  trafficProviderIds: readonly string[] | null;
  /** Only leads (and attempts, caps…) of these partners; null: any partner. */
  partnerIds: readonly string[] | null;
}

export const UNSCOPED: DataScope = Object.freeze({ trafficProviderIds: null, partnerIds: null });

/** The scope of one traffic provider's portal: its own leads, whoever bought them. */
export const providerScope = (trafficProviderId: string): DataScope =>
  Object.freeze({ trafficProviderIds: [trafficProviderId], partnerIds: null });

export const isScoped = (s: DataScope) => s.trafficProviderIds !== null || s.partnerIds !== null;

/** `column in (ids)`, or false for an empty list (a scope of nothing reads nothing). */
function inList(column: string, ids: readonly string[]): Expression<SqlBool> {
  if (ids.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(ids.map((id) => sql`${id}`))})`;
}

/**
 * The condition a lead row (under `alias`, e.g. 'leads' or 'l') must meet to be in scope, or
 * null when the scope is open. Use: `const c = leadInScope(scope, 'l'); if (c) q = q.where(c);`
 */
export function leadInScope(scope: DataScope, alias = 'leads'): Expression<SqlBool> | null {
  const parts: Expression<SqlBool>[] = [];
  if (scope.trafficProviderIds) parts.push(inList(`${alias}.traffic_provider_id`, scope.trafficProviderIds));
  if (scope.partnerIds) parts.push(inList(`${alias}.partner_id`, scope.partnerIds));
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/** Whether one row's owners are in scope (for a record read by id: out of scope answers 404). */
export function rowInScope(scope: DataScope, row: { traffic_provider_id?: string | null; partner_id?: string | null }) {
  if (scope.trafficProviderIds && !scope.trafficProviderIds.includes(row.traffic_provider_id ?? '')) return false;
  if (scope.partnerIds && !scope.partnerIds.includes(row.partner_id ?? '')) return false;
  return true;
}
