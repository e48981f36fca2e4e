import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { REVIEW_REJECTED } from './review-rule.js';

// The review queue's SQL. Held leads are found through the partial index leads_held
// (migration 20261205T000000Z_review_queue): only they are in it, however large the lead table.
// Its condition is written as a literal (IS_HELD): a bound parameter would not let either engine
// prove a query's rows are in a partial index.

const IS_HELD = (alias: string) => sql<boolean>`${sql.ref(`${alias}.status`)} = 'held'`;

/** The queue in a reader's scope: how many leads are held, per traffic provider, and since when. */
export function heldByProvider(db: DB, scope: DataScope) {
  let q = db
    .selectFrom('leads')
    .innerJoin('traffic_providers as p', 'p.id', 'leads.traffic_provider_id')
    .select(['leads.traffic_provider_id', 'p.name'])
    .select((eb) => [eb.fn.countAll<number | string>().as('held'), eb.fn.min('leads.created_at').as('oldest_held_at')])
    .where(IS_HELD('leads'))
    .groupBy(['leads.traffic_provider_id', 'p.name'])
    .orderBy('oldest_held_at');
  const c = leadInScope(scope);
  if (c) q = q.where(c);
  return q.execute();
}

/** The leads among `ids` that the reader may see, with their status. */
export function leadsAmong(db: DB, ids: readonly string[], scope: DataScope) {
  let q = db.selectFrom('leads').select(['id', 'status', 'traffic_provider_id', 'partner_id']).where('id', 'in', ids);
  const c = leadInScope(scope);
  if (c) q = q.where(c);
  return q.execute();
}

/**
 * Releases held leads to routing: pending with no lease, so the delivery recovery sweep claims
 * each (one process, one claim: distribution/recovery.ts) and routes it as a new delivery.
 * Only leads still held move (of two reviewers, one wins); returns those that did.
 */
export const releaseHeld = (db: DB, ids: readonly string[], at: string) =>
  db
    .updateTable('leads')
    .set({ status: 'pending', reason: null, lease_until: null, status_updated_at: at })
    .where('id', 'in', ids)
    .where('status', '=', 'held')
    .returning(['id', 'traffic_provider_id'])
    .execute();

/** Rejects held leads with the reviewer's reason (the provider is told it); returns those that moved. */
export const rejectHeld = (db: DB, ids: readonly string[], reason: string, at: string) =>
  db
    .updateTable('leads')
    .set({ status: 'rejected', reason: `${REVIEW_REJECTED}${reason}`, lease_until: null, status_updated_at: at })
    .where('id', 'in', ids)
    .where('status', '=', 'held')
    .returning(['id', 'traffic_provider_id'])
    .execute();

/** The oldest held lead of a provider (the alert's dedupe key). */
export const oldestHeld = (db: DB, providerId: string) =>
  db
    .selectFrom('leads')
    .select(['id', 'created_at'])
    .where(IS_HELD('leads'))
    .where('traffic_provider_id', '=', providerId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
