import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, postgresOnly } from '../../../test/helpers.js';

// PostgreSQL: a write sent twice is prepared once per connection (database.ts, prepareWrites);
// reads stay unnamed, each planned for its own values.
postgresOnly('PostgreSQL: writes seen twice become prepared statements of the connection; reads do not', async (t) => {
  const { db } = await buildTestApp(t, 'postgres');
  await db.connection().execute(async (conn) => {
    const prepared = async () =>
      (await sql<{ statement: string }>`select statement from pg_prepared_statements where name like 'leadgate_%'`.execute(conn)).rows.map((r) => r.statement);
    const before = await prepared();
    for (const value of ['a', 'b', 'c']) {
      await conn.updateTable('settings').set({ value }).where('key', '=', 'prepared-test').execute();
      await conn.selectFrom('settings').select('value').where('key', '=', 'prepared-test-read').execute();
    }
    const after = (await prepared()).filter((s) => !before.includes(s));
    assert.equal(after.length, 1, after.join('\n'));
    assert.match(after[0], /^update "settings"/);
  });
});
