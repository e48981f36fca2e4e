import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { clientIp } from '../../auth/guard.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import type { AuditAction } from './actions.js';

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

/** Records a security event. Pass the transaction when the change it records is in one. */
export async function audit(db: Kysely<Database>, req: FastifyRequest | null, event: AuditEvent): Promise<void> {
  const p = req?.principal ?? null;
  await db
    .insertInto('audit_log')
    .values({
      id: newId(),
      at: nowIso(),
      actor_id: event.actor ? event.actor.id : (p?.operator.id ?? null),
      actor_email: event.actor ? event.actor.email : (p?.operator.email ?? null),
      via: event.via ?? (p ? p.via : req ? 'anonymous' : 'system'),
      ip: req ? clientIp(req) : null,
      action: event.action,
      target_type: event.target_type ?? null,
      target_id: event.target_id ?? null,
      details: JSON.stringify(event.details ?? {}),
    })
    .execute();
}
