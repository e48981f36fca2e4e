import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { TestApp } from './helpers.js';

/** Where the erased values could still be: the SQLite file and its WAL, or every text column on PostgreSQL. */
export async function tracesOf(ta: TestApp, needles: string[]): Promise<string[]> {
  const found: string[] = [];
  if (ta.config.database.engine === 'sqlite') {
    const file = ta.config.database.file;
    for (const f of [file, `${file}-wal`]) {
      if (!existsSync(f)) continue;
      const bytes = readFileSync(f);
      for (const n of needles) if (bytes.includes(Buffer.from(n))) found.push(`${n} in ${f}`);
    }
    return found;
  }
  const schema = ta.config.database.schema!;
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = ${schema} and data_type in ('text', 'character varying', 'json', 'jsonb')`.execute(ta.db);
  assert.ok(rows.length > 50, 'the text columns are found');
  for (const r of rows)
    for (const n of needles) {
      const { rows: hit } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(r.table_name)}
        where lower(${sql.ref(r.column_name)}::text) like ${`%${n.toLowerCase()}%`}`.execute(ta.db);
      if (hit[0].n > 0) found.push(`${n} in ${r.table_name}.${r.column_name}`);
    }
  return found;
}
