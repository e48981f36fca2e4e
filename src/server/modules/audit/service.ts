import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { clientIp } from '../../auth/guard.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { withNames } from '../../db/names.js';
import { invalid } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import type { DataScope } from '../../db/scope.js';
import { principalOf, type Principal, type ProviderPrincipal } from '../../types.js';
import { AUDIT_ACTIONS, type AuditAction } from './actions.js';
import { maskLeadContacts } from './contacts.js';
import { auditRows, insertAuditEntry } from './queries.js';

/**
 * Who does a use case and from where: what the audit log records. Use cases in service.ts take
 * an Actor, never a request; a route makes one with actorOf(req).
 */
export interface Actor {
  principal: Principal | null;
  ip: string | null;
  /** A traffic provider's portal user (portal routes only; then principal is null). */
  provider?: ProviderPrincipal | null;
}

export const actorOf = (req: FastifyRequest): Actor => ({
  principal: req.principal ?? null,
  ip: clientIp(req),
  provider: req.providerPrincipal ?? null,
});

/** The provider principal of a portal use case (the guard resolved it for a portal route). */
export function providerOf(actor: Actor): ProviderPrincipal {
  if (!actor.provider) throw new Error('providerOf() outside a portal route');
  return actor.provider;
}

/** Whose data the actor reads (db/scope.ts): a portal user its provider's, an operator its role's scope. */
export const scopeOf = (actor: Actor): DataScope => actor.provider?.scope ?? principalOf(actor).scope;

/** A use case run by the server itself (a job, a partner's postback): no principal, no address. */
export const SYSTEM: Actor = { principal: null, ip: null };

export interface AuditEvent {
  action: AuditAction;
  target_type?: string;
  target_id?: string;
  details?: Record<string, unknown>;
  /** For events without a principal yet (login, failed login): who it concerns. */
  actor?: { id: string | null; email: string | null };
  /** Events made by a machine on a request without an operator (a partner's postback): 'system'. */
  via?: 'system';
  /** For events without a principal yet that concern a provider user (its login, its invitation accepted). */
  actorKind?: 'provider_user';
}

/** Records a security event. Pass the transaction when the change it records is in one. */
export async function audit(db: Kysely<Database>, actor: Actor, event: AuditEvent): Promise<void> {
  const p = actor.principal;
  const pp = actor.provider ?? null;
  // A portal user acts as itself; an operator viewing a portal as its provider stays the operator.
  const asProvider = pp !== null && pp.viewAs === null;
  const who = p ? { id: p.operator.id, email: p.operator.email } : pp ? { id: pp.user.id, email: pp.user.email } : null;
  await insertAuditEntry(db, {
    id: newId(),
    at: nowIso(),
    actor_id: event.actor ? event.actor.id : (who?.id ?? null),
    actor_email: event.actor ? event.actor.email : (who?.email ?? null),
    actor_kind: event.actorKind ?? (asProvider ? 'provider_user' : 'operator'),
    via: event.via ?? (p ? p.via : pp ? pp.via : actor.ip === null ? 'system' : 'anonymous'),
    ip: actor.ip,
    action: event.action,
    target_type: event.target_type ?? null,
    target_id: event.target_id ?? null,
    details: JSON.stringify(event.details ?? {}),
  });
}

/**
 * The audit log, newest first. A lead's name only for a reader holding leads:view; without
 * leads:contacts, no lead's email or phone in any detail either (rule 16).
 */
export async function listAuditLog(
  db: Kysely<Database>,
  actor: Actor,
  query: { limit: number; cursor?: string; action?: string; actor_id?: string },
) {
  const { limit, cursor, action, actor_id } = query;
  const after = decodeCursor(cursor, ['id']);
  const rows = await auditRows(db, { beforeId: after?.id, action, actorId: actor_id, limit });
  const page = pageOf(rows, limit, (r) => ({ id: r.id }));
  const permissions = principalOf(actor).permissions;
  const data = await withNames(
    db,
    page.data.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> })),
    permissions.has('leads:view'),
  );
  return { ...page, data: permissions.has('leads:contacts') ? data : await maskLeadContacts(db, data) };
}

/** Every action the log records, a page at a time, for filter pickers. */
export function listAuditActions(query: { limit: number; cursor?: string }) {
  const { limit, cursor } = query;
  const after = decodeCursor(cursor, ['action']);
  const start = after ? AUDIT_ACTIONS.indexOf(after.action as AuditAction) + 1 : 0;
  if (after && start === 0) invalid([{ field: 'cursor', message: 'is not a cursor this list produced' }]);
  return pageOf(AUDIT_ACTIONS.slice(start, start + limit + 1), limit, (action) => ({ action }));
}
