import type { Kysely } from 'kysely';

// Two-factor sign-in (issue 6).
//
// operators.totp_secret: the base32 TOTP seed, set once enrolment is confirmed (null: 2FA off).
//   A seed must be readable to check codes, so unlike passwords and tokens it cannot be hashed.
// operators.totp_pending_secret: a seed offered by "enrol" and waiting for its confirming code;
//   replaced by a new enrolment, cleared when confirmed.
// operators.totp_last_step: the 30-second time step of the last accepted code, so a code cannot
//   be used twice (RFC 6238 §5.2).
// recovery_codes: ten one-time codes per enrolment, stored as SHA-256 hashes; used_at is set when
//   one is spent. A new enrolment or disabling 2FA deletes the old ones.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('operators').addColumn('totp_secret', 'text').execute();
  await db.schema.alterTable('operators').addColumn('totp_pending_secret', 'text').execute();
  await db.schema.alterTable('operators').addColumn('totp_last_step', 'integer').execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('operator_id', 'text', (c) => c.notNull().references('operators.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('recovery_codes_operator').on('recovery_codes').column('operator_id').execute();
}
