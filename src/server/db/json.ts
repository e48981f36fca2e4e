import type { Kysely } from 'kysely';
import { jsonArrayFrom as pgArray, jsonObjectFrom as pgObject } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteArray, jsonObjectFrom as sqliteObject } from 'kysely/helpers/sqlite';
import { isPostgres } from './database.js';

type Subquery<O> = Parameters<typeof sqliteArray<O>>[0];

// Rows of a subquery as one JSON value, so one statement can answer what took several (a lead
// with its attempts; everything an intake checks). SQLite answers the JSON as text, PostgreSQL
// as parsed JSON: read the column with fromJson. Neither promises a subquery's order inside an
// aggregate: sort in code where order matters.

/** The subquery's rows as a JSON array ([] when none). */
export const jsonArrayFrom = <O>(db: Kysely<any>, expr: Subquery<O>) =>
  isPostgres(db) ? pgArray(expr) : sqliteArray(expr);

/** The subquery's first row as a JSON object (null when none). */
export const jsonObjectFrom = <O>(db: Kysely<any>, expr: Subquery<O>) =>
  isPostgres(db) ? pgObject(expr) : sqliteObject(expr);

/** A column made by jsonArrayFrom or jsonObjectFrom, as a value on either engine. */
export const fromJson = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
