import { Type, type TSchema } from 'typebox';
import { invalid } from './errors.js';

export const PageQuery = {
  limit: Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: 500,
    default: 50,
    description: 'Page size (1–500, default 50)',
  }),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: 'next_cursor from the previous page' }),
  ),
};

export const Page = <T extends TSchema>(item: T, title: string) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as cursor= for the next page; null on the last page',
      }),
    },
    { title },
  );

/** Cursors are opaque to clients: base64url JSON of the last row's sort key. */
export function encodeCursor(key: Record<string, string>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor<K extends string>(
  cursor: string | undefined,
  fields: readonly K[],
): Record<K, string> | null {
  if (cursor === undefined) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (
      parsed &&
      typeof parsed === 'object' &&
      fields.every((f) => typeof parsed[f] === 'string' && !parsed[f].includes('\u0000'))
    ) {
      return parsed as Record<K, string>;
    }
  } catch {
    // fall through
  }
  return invalid([{ field: 'cursor', message: 'is not a cursor this list produced' }]);
}

/** Rows fetched with limit+1: returns the page and the cursor to the next one. */
export function pageOf<R>(rows: R[], limit: number, keyOf: (row: R) => Record<string, string>) {
  const more = rows.length > limit;
  const data = more ? rows.slice(0, limit) : rows;
  return { data, next_cursor: more ? encodeCursor(keyOf(data[data.length - 1])) : null };
}
