import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { clientIp } from '../../auth/guard.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import type { Principal } from '../../types.js';
import type { AuditAction } from './actions.js';

/**
 * Who does a use case and from where: what the audit log records. Use cases in service.ts take
 * an Actor, never a request; a route makes one with actorOf(req).
 */
export interface Actor {
  principal: Principal | null;
  ip: string | null;
}

export const actorOf = (req: FastifyRequest): Actor => ({ principal: req.principal ?? null, ip: clientIp(req) });

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
}

/**
 * Records a security event. Pass the transaction when the change it records is in one. `who` is
 * the use case's Actor (a request is still accepted from routes not yet moved to a use case).
 */
export async function audit(
  db: Kysely<Database>,
  who: Actor | FastifyRequest | null,
  event: AuditEvent,
): Promise<void> {
  const actor = who === null ? SYSTEM : 'raw' in who ? actorOf(who) : who;
  const p = actor.principal;
  await db
    .insertInto('audit_log')
    .values({
      id: newId(),
      at: nowIso(),
      actor_id: event.actor ? event.actor.id : (p?.operator.id ?? null),
      actor_email: event.actor ? event.actor.email : (p?.operator.email ?? null),
      via: event.via ?? (p ? p.via : actor.ip === null ? 'system' : 'anonymous'),
      ip: actor.ip,
      action: event.action,
      target_type: event.target_type ?? null,
      target_id: event.target_id ?? null,
      details: JSON.stringify(event.details ?? {}),
    })
    .execute();
}
