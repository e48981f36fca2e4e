import { rolePermissions } from '../../auth/authenticate.js';
import { HttpProblem } from '../../http/errors.js';
import { EVENT_TYPES, mayReadEvent, type EventType } from '../../events/types.js';
import type { Principal } from '../../types.js';

// A webhook is a standing read: whoever points one at a receiver reads every event it sends.
// So each event type's permission (events/types.ts) is asked of the caller who subscribes
// (refused with 403 otherwise), and of the webhook's owner each time an event is sent (the
// owner may since have lost it: role changed or edited, disabled, deleted).

/** The types among `types` that these permissions may not read. */
const unreadable = (permissions: ReadonlySet<string>, types: readonly EventType[]) =>
  types.filter((t) => !mayReadEvent(permissions, t));

const needs = (types: EventType[]) => types.map((t) => `${t} (${EVENT_TYPES[t].permission})`).join(', ');

/**
 * 403 unless the caller may read every one of `types`, naming those it may not. A key is judged
 * on its effective permissions; insufficient_scope when its operator's role would allow them.
 */
export function assertCanRead(principal: Principal, types: readonly EventType[]) {
  const refused = unreadable(principal.permissions, types);
  if (!refused.length) return;
  const byKey = principal.via === 'api_key' && !unreadable(principal.rolePermissions, refused).length;
  throw new HttpProblem(
    403,
    byKey ? 'insufficient_scope' : 'forbidden',
    `A webhook sends what its events carry, so it may only subscribe to events you may read. ` +
      `${byKey ? 'This API key lacks the scope for' : 'You may not read'}: ${needs(refused)}.`,
  );
}

/** A webhook's owner as read with it (left joins: all null when there is none). */
export interface OwnerRow {
  owner_status: 'active' | 'disabled' | null;
  owner_builtin: number | null;
  owner_permissions: string | null;
  owner_scope_traffic_provider_ids: string | null;
  owner_scope_partner_ids: string | null;
}

/**
 * What the webhook's owner may read now, read with the webhook at send time (no cache, so it
 * holds on every instance), as a check of one event type: why it may not be sent, or null.
 */
export function ownerCheck(owner: OwnerRow): (type: EventType) => string | null {
  if (owner.owner_status === null) {
    return () =>
      'the webhook has no owner (its owner was deleted): nothing is sent until an operator who may read its events changes it';
  }
  if (owner.owner_status !== 'active') return () => "the webhook's owner is disabled";
  if (
    !owner.owner_builtin &&
    (owner.owner_scope_traffic_provider_ids !== null || owner.owner_scope_partner_ids !== null)
  )
    // A webhook sends the whole account's events; a role limited to some accounts may not read them.
    return () => "the webhook's owner holds a role limited to some traffic providers or partners";
  const rights = rolePermissions({ builtin: owner.owner_builtin ?? 0, permissions: owner.owner_permissions ?? '[]' });
  return (type) =>
    mayReadEvent(rights, type)
      ? null
      : `the webhook's owner may no longer read ${type} events (needs ${EVENT_TYPES[type].permission})`;
}
