import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, postgresOnly } from '../../../test/helpers.js';
import { PREPARED } from './database.js';

// PostgreSQL: a write sent twice is prepared once per connection (database.ts, prepareWrites),
// and so is a read marked PREPARED; other reads stay unnamed, each planned for its own values.
postgresOnly(
  'PostgreSQL: writes and marked reads seen twice become prepared statements of the connection; other reads do not',
  async (t) => {
    const { db } = await buildTestApp(t, 'postgres');
    await db.connection().execute(async (conn) => {
      const prepared = async () =>
        (
          await sql<{
            statement: string;
          }>`select statement from pg_prepared_statements where name like 'leadgate_%'`.execute(conn)
        ).rows.map((r) => r.statement);
      const before = await prepared();
      for (const value of ['a', 'b', 'c']) {
        await conn.updateTable('settings').set({ value }).where('key', '=', 'prepared-test').execute();
        await conn.selectFrom('settings').select('value').where('key', '=', 'prepared-test-read').execute();
        await conn
          .selectFrom('settings')
          .select('updated_at')
          .where('key', '=', value)
          .modifyEnd(sql.raw(PREPARED))
          .execute();
      }
      const after = (await prepared()).filter((s) => !before.includes(s)).sort();
      assert.equal(after.length, 2, after.join('\n'));
      assert.match(after[0], /^select "updated_at" from "settings" .*\/\* prepared \*\/$/);
      assert.match(after[1], /^update "settings"/);
    });
  },
);
