import { sql, type Expression, type RawBuilder } from 'kysely';

/**
 * Case-insensitive "contains" for free-text filters, the same on both engines: the pattern's
 * own % and _ are escaped, and ESCAPE is spelled out (PostgreSQL defaults to backslash,
 * SQLite has no default escape character).
 */
export function containsText(column: Expression<string | null>, text: string): RawBuilder<boolean> {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${column}) like ${pattern} escape '\\'`;
}
