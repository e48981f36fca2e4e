import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Authentication reads credentials, operators, roles and the IP allow-list from an in-process
// cache (src/server/auth/cache.ts) that stays exactly as strict as reading them on every
// request: any change to a session, an API key, an operator, a role or the allow-list (a key
// revoked, an operator disabled, a role's permissions, a session ended, the once-a-minute
// last-use stamps too) bumps auth_state.generation in the same transaction, by trigger, whoever
// writes (any server process, a script, psql). Each request reads that one number; a new one
// empties the cache.
const WATCH: [table: string, event: string, when: string | null][] = [
  ['api_keys', 'update', null],
  ['api_keys', 'delete', null],
  ['operators', 'update', null],
  ['operators', 'delete', null],
  ['roles', 'update', null],
  ['roles', 'delete', null],
  ['sessions', 'update', null],
  ['sessions', 'delete', null],
  ['settings', 'insert', "new.key = 'ip_allowlist'"],
  ['settings', 'update', "new.key = 'ip_allowlist' or old.key = 'ip_allowlist'"],
  ['settings', 'delete', "old.key = 'ip_allowlist'"],
];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('auth_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('generation', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('auth_state').values({ id: 1, generation: 0 }).execute();
  const bump = 'update auth_state set generation = generation + 1 where id = 1';
  if (postgres) {
    await sql.raw(`create function auth_generation_bump() returns trigger language plpgsql as $$ begin ${bump}; return null; end $$`).execute(db);
  }
  for (const [i, [table, event, when]] of WATCH.entries()) {
    const name = `${table}_auth_generation_${i}`;
    if (postgres) {
      await sql.raw(`create trigger ${name} after ${event} on ${table} for each row ${when ? `when (${when}) ` : ''}execute function auth_generation_bump()`).execute(db);
    } else {
      await sql.raw(`create trigger ${name} after ${event} on ${table} for each row ${when ? `when ${when} ` : ''}begin ${bump}; end`).execute(db);
    }
  }
}
