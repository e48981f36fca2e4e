// Velocity: more leads from one IP, phone or email domain within a window than a traffic
// provider's limit raises a flag. Counted in the database (lead_velocity, written with each lead
// of a provider that sets a limit) while intake holds a lock on the value (intake/duplicates.ts
// serialized), so processes sharing a database count exactly. Counting stops at the limit.
import { sql, type Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database, LeadFields } from '../../db/tables.js';
import { flagBit, type Flag } from './flags.js';

export const VELOCITY_KINDS = ['ip', 'phone', 'email_domain'] as const;
export type VelocityKind = (typeof VELOCITY_KINDS)[number];

export interface StoredVelocityPolicy {
  window_minutes: number;
  ip: number | null;
  phone: number | null;
  email_domain: number | null;
}

/** The longest window: keys older than this are purged. */
export const MAX_WINDOW_MINUTES = 7 * 24 * 60;

const Limit = (what: string) =>
  Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 100_000 }), Type.Null()], {
    description: `Flag a lead when this many earlier leads of the provider within the window came ${what}; null: no limit`,
  });

export const VelocityPolicy = Type.Object(
  {
    window_minutes: Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: MAX_WINDOW_MINUTES,
      description: 'How far back to count (1 minute to 7 days)',
    }),
    ip: Limit('from the same IP address'),
    phone: Limit('with the same phone number'),
    email_domain: Limit('with the same email domain'),
  },
  { additionalProperties: false, title: 'VelocityPolicy' },
);

export const DEFAULT_VELOCITY_POLICY: StoredVelocityPolicy = {
  window_minutes: 60,
  ip: null,
  phone: null,
  email_domain: null,
};

const FLAG_OF: Record<VelocityKind, Flag> = {
  ip: 'velocity_ip',
  phone: 'velocity_phone',
  email_domain: 'velocity_email_domain',
};

/** A stored policy, read once: the kinds it limits with their limits (empty: velocity is off), and its window. */
export function activeLimits(json: string): { limits: { kind: VelocityKind; limit: number }[]; windowMs: number } {
  const p = JSON.parse(json) as StoredVelocityPolicy;
  return {
    limits: VELOCITY_KINDS.flatMap((kind) => (p[kind] ? [{ kind, limit: p[kind]! }] : [])),
    windowMs: p.window_minutes * 60_000,
  };
}

/** A lead's key for a kind. */
export function velocityKey(kind: VelocityKind, lead: Pick<LeadFields, 'ip' | 'phone' | 'email'>): string {
  if (kind === 'ip') return `ip:${lead.ip}`;
  if (kind === 'phone') return `phone:${lead.phone}`;
  return `domain:${lead.email.slice(lead.email.lastIndexOf('@') + 1)}`;
}

/**
 * How many of the provider's leads since `since` have the key, counted up to `limit` (enough to
 * know the limit is reached, however many there are). A scalar subquery of intake's one read.
 */
export function countUpTo(db: Kysely<Database>, providerId: string, key: string, since: string, limit: number) {
  const inner = db
    .selectFrom('lead_velocity')
    .select(sql<number>`1`.as('one'))
    .where('traffic_provider_id', '=', providerId)
    .where('key', '=', key)
    .where('created_at', '>=', since)
    .limit(limit);
  return db.selectFrom(inner.as('v')).select((eb) => eb.fn.countAll<number>().as('n'));
}

/** The velocity flags of counts (as read, one per limited kind, in the order given). */
export function velocityFlags(limits: { kind: VelocityKind; limit: number }[], counts: (number | string)[]) {
  return limits.reduce(
    (mask, { kind, limit }, i) => (Number(counts[i]) >= limit ? mask | flagBit(FLAG_OF[kind]) : mask),
    0,
  );
}

/** Deletes velocity keys older than `before` (past every window); answers how many. */
export async function purgeVelocityKeys(db: Kysely<Database>, before: string): Promise<number> {
  const res = await db.deleteFrom('lead_velocity').where('created_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
