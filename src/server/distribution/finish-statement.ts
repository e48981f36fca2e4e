import { sql, type ExpressionBuilder, type Kysely, type Updateable } from 'kysely';
import { compiledPerShape } from '../db/compiled.js';
import type { Database, LeadAttemptsTable, LeadsTable } from '../db/tables.js';

/** The lead row, still pending and still ours (the lease is the fencing token). */
export const owned = (leadId: string, lease: string | null) => (eb: ExpressionBuilder<Database, 'leads'>) =>
  eb.and([
    eb('id', '=', leadId),
    eb('status', '=', 'pending'),
    lease === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', lease),
  ]);

/**
 * finishAttempt's one statement on PostgreSQL (engine.ts finishInOneStatement), built once per
 * shape (its columns and cap slots: db/compiled.ts) as Kysely would otherwise build it per lead.
 */
export const finishStatement = compiledPerShape(
  (
    db: Kysely<Database>,
    _variant: string,
    d: {
      attemptId: string;
      answer: Updateable<LeadAttemptsTable>;
      leadId: string;
      lease: string;
      delivered: Updateable<LeadsTable>;
      accepted: boolean;
      providerId: string;
      facts: { kind: string; data: string; at: string }[];
      releasing: boolean;
      slots: { scope: string; period: string }[];
    },
  ) =>
    db
      .with('a', (q) =>
        q
          .updateTable('lead_attempts')
          .set(d.answer)
          .where('id', '=', d.attemptId)
          .where('outcome', '=', 'in_flight')
          .returning('lead_attempts.id'),
      )
      .with('l', (q) =>
        q
          .updateTable('leads')
          .set(d.delivered)
          .where(owned(d.leadId, d.lease))
          .where((eb) => eb.and([eb.val(d.accepted), eb.exists(eb.selectFrom('a').select('a.id'))]))
          .returning('leads.id'),
      )
      // The provider's log: its facts, written where the lead was (nothing reads p either).
      .with('p', (q) =>
        q
          .insertInto('provider_log_pending')
          .columns(['traffic_provider_id', 'lead_id', 'kind', 'data', 'recorded_at', 'visible_at'])
          .expression(
            sql`select ${d.providerId}, l.id, f.kind, f.data, f.at, f.at from l cross join (values ${sql.join(
              d.facts.map((f) => sql`(${f.kind}, ${f.data}, ${f.at})`),
            )}) as f (kind, data, at)`,
          )
          .returning('provider_log_pending.id'),
      )
      // Nothing reads r: PostgreSQL runs every data-modifying CTE to completion all the same.
      .with('r', (q) =>
        q
          .updateTable('cap_counters')
          .set({ used: sql`used - 1` })
          .where((eb) =>
            eb.and([
              eb.val(d.releasing),
              eb.or(
                d.slots.length
                  ? d.slots.map((s) => eb.and([eb('scope', '=', s.scope), eb('period', '=', s.period)]))
                  : [eb.val(false)],
              ),
              eb('used', '>', 0),
              eb.exists(eb.selectFrom('a').select('a.id')),
            ]),
          )
          .returning('cap_counters.scope'),
      )
      .selectNoFrom((eb) => [
        eb
          .selectFrom('a')
          .select((e) => e.fn.countAll<string>().as('n'))
          .as('attempt'),
        eb
          .selectFrom('l')
          .select((e) => e.fn.countAll<string>().as('n'))
          .as('lead'),
      ]),
);

/**
 * finishAttempt's statements on SQLite (in one transaction there, where statements are cheap and
 * commits shared), built once per shape as well: the partner's answer on the attempt, still in
 * flight; the rows it changed returned (none: the sweep took the lead over).
 */
export const answerAttempt = compiledPerShape(
  (db: Kysely<Database>, _variant: string, d: { attemptId: string; answer: Updateable<LeadAttemptsTable> }) =>
    db
      .updateTable('lead_attempts')
      .set(d.answer)
      .where('id', '=', d.attemptId)
      .where('outcome', '=', 'in_flight')
      .returning('id'),
);

/** The lead delivered, if still ours (SQLite; see answerAttempt): the rows changed. */
export const markDelivered = compiledPerShape(
  (db: Kysely<Database>, _variant: string, d: { leadId: string; lease: string; delivered: Updateable<LeadsTable> }) =>
    db.updateTable('leads').set(d.delivered).where(owned(d.leadId, d.lease)).returning('id'),
);
