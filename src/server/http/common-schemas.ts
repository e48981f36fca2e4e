import { Type, type Static, type TSchema } from 'typebox';

// Schema pieces shared by several resources. Field-level rules live here once.

export const Timestamp = Type.String({ format: 'date-time' });

/**
 * A string, number, integer or boolean, or null, as one schema with two types
 * (`{"type": ["string", "null"]}`, OpenAPI 3.1). The serializer tells them apart by typeof; for an
 * anyOf it ran a validator on every value, a date-time's format regex included (a sixth of a
 * lead read's serialization). Responses only: request bodies keep anyOf, whose refusals name
 * each alternative.
 */
export function Nullable<T extends TSchema & { type: 'string' | 'number' | 'integer' | 'boolean' }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

export const NullableTimestamp = Nullable(Timestamp);

export const ResourceName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description: 'Shown in lists; need not be unique',
});

export const ActiveStatus = Type.Union([Type.Literal('active'), Type.Literal('paused')]);

/** ISO 3166-1 alpha-2, upper case. */
export const CountryCode = Type.String({
  minLength: 2,
  maxLength: 2,
  pattern: '^[A-Z]{2}$',
  format: 'country',
  description: 'An assigned ISO 3166-1 alpha-2 code, upper case, e.g. DE',
});
export const Countries = Type.Array(CountryCode, {
  uniqueItems: true,
  maxItems: 250,
  description: 'Empty: every country',
});

export const HHMM = Type.String({
  minLength: 5,
  maxLength: 5,
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  description: '24-hour HH:MM',
});

export const WorkingHours = Type.Object(
  {
    timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
    days: Type.Array(Type.Integer({ format: 'int32', minimum: 1, maximum: 7 }), {
      uniqueItems: true,
      minItems: 1,
      maxItems: 7,
      description: 'ISO weekdays: 1 = Monday … 7 = Sunday',
    }),
    from: HHMM,
    to: HHMM,
  },
  {
    additionalProperties: false,
    title: 'WorkingHours',
    description: 'Open from–to on the given days, in the timezone; to < from spans midnight',
  },
);

export const Cap = Type.Union([Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000 }), Type.Null()], {
  description: 'null: no cap',
});

export const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

/** Query fields every resource list takes besides limit/cursor. */
export const ResourceListQuery = {
  status: Type.Optional(ActiveStatus),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Part of the name' })),
  include_archived: Type.Boolean({
    default: false,
    description: 'Also list archived (deleted but still referenced) records',
  }),
};
