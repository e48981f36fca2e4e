import type SQLite from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// What Kysely's SQLite driver runs a statement with (its `database.prepare(sql)`): each SQL text
// prepared once, and rows built in JavaScript.
//
// Kysely prepares every statement anew; on SQLite, preparing costs as much as running a typical
// indexed query (tens of µs), and lead intake runs ~20 statements per lead. The same SQL text
// reuses its prepared statement. Safe: Kysely runs one statement at a time on the connection
// (a stream holds the connection until it ends), so a cached statement is never in use twice.
//
// better-sqlite3 makes each row object in C++, one property at a time: for a page of 50 leads
// (38 columns) that is half of the statement's time. Rows are read as arrays instead and made by
// a function compiled once per column list, an object literal (V8 gives every row one shape):
// 0.69 → 0.34 ms for that page (bench/RESULTS.md, issue 30, fifth step). The same objects as
// better-sqlite3's: the same keys in the same order, a later duplicate name winning.
const STATEMENT_CACHE_SIZE = 500;
/** Statements that change the schema: a cached statement's columns may differ afterwards. */
const DDL = /^\s*(create|drop|alter)\b/i;

type Row = Record<string, unknown>;
type MakeRow = (values: unknown[]) => Row;

const factories = new Map<string, MakeRow>();

/** The row maker for these column names (one per distinct list, kept for the process). */
function rowMaker(names: string[]): MakeRow {
  const key = names.join('\u0000');
  let make = factories.get(key);
  if (!make) {
    // A key of "__proto__" in a literal would set the prototype: such a list is made by assignment.
    make = names.includes('__proto__')
      ? (values) => {
          const row: Row = {};
          names.forEach((n, i) =>
            Object.defineProperty(row, n, { value: values[i], enumerable: true, writable: true, configurable: true }),
          );
          return row;
        }
      : // The keys are JSON string literals: no column name can break out of them.
        (new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`) as MakeRow);
    if (factories.size < 5_000) factories.set(key, make);
  }
  return make;
}

/** A reader statement that returns better-sqlite3's rows, built from raw arrays. */
function readerOf(stmt: SQLite.Statement): SqliteStatement {
  stmt.raw(true);
  let names: string[] | null = null;
  let make: MakeRow | null = null;
  const rows = (values: unknown[][]) => {
    if (!values.length) return [] as Row[];
    // The column list is read once: a statement re-prepared by SQLite after another process
    // changed the schema is noticed by its width (in-process DDL empties the cache itself).
    if (!make || names!.length !== values[0].length) {
      names = stmt.columns().map((c) => c.name);
      make = rowMaker(names);
    }
    return values.map(make);
  };
  return {
    reader: true,
    all: (params) => rows(stmt.all(params) as unknown[][]),
    run: (params) => stmt.run(params),
    *iterate(params) {
      for (const values of stmt.iterate(params) as IterableIterator<unknown[]>) yield rows([values])[0];
    },
  };
}

/** The handle Kysely's SqliteDialect is given: statements cached by text, rows made in JavaScript. */
export function withStatementCache(sqlite: SQLite.Database, onClose: () => void): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  let nothing: SQLite.Statement | undefined;
  return {
    close: () => {
      onClose();
      sqlite.close();
    },
    prepare(text: string) {
      // On some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) SQLite rolls the transaction
      // back itself; Kysely's own rollback then fails with "no transaction is active", and that
      // error replaces the one that matters (a full disk answered 500 instead of 503). Nothing is
      // left to roll back: run a statement that does nothing.
      if (text === 'rollback' && !sqlite.inTransaction) return (nothing ??= sqlite.prepare('select 1 where 0'));
      if (DDL.test(text)) {
        cache.clear();
        return sqlite.prepare(text);
      }
      let stmt = cache.get(text);
      if (!stmt) {
        // First in, first out: the hot statements come back at once; a rare one is re-prepared.
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        const prepared = sqlite.prepare(text);
        stmt = prepared.reader ? readerOf(prepared) : prepared;
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
}
