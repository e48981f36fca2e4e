import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { Readable } from 'node:stream';
import { isCountryCode } from './countries.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  allErrors: true, // report every bad field at once, not only the first
  removeAdditional: false, // unknown fields are refused by additionalProperties:false, never silently dropped
  useDefaults: true,
  strict: false,
  keywords: ['x-example'],
  verbose: true, // errors carry the value and schema, so a message can quote it ("UK": use GB)
};

// Bodies are JSON and must carry the right types; query strings, path parameters and headers
// are text and are coerced ("limit=10" → 10, "status=a" → ["a"]).
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
// format: 'country': an assigned ISO 3166-1 alpha-2 code, the same list intake checks leads by,
// so a partner, campaign or target cannot be set up for a country no lead can have.
for (const ajv of [bodyAjv, textAjv]) ajv.addFormat('country', { type: 'string', validate: isCountryCode });

/**
 * JSON pointer to the first string (or key) holding U+0000, or null. Iterative: a free-form
 * field (a partner's body template) may nest thousands of levels deep within the body limit,
 * and recursion would overflow the stack (a 500).
 */
function nulAt(root: unknown): string | null {
  const stack: [value: unknown, path: string, nulInKey: boolean][] = [[root, '', false]];
  while (stack.length) {
    const [value, path, nulInKey] = stack.pop()!;
    if (nulInKey) return path;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path;
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]; // pushed last to first, so visited in document order
        stack.push([v, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, k.includes('\u0000')]);
      }
    }
  }
  return null;
}

// PostgreSQL text cannot hold U+0000 (the query fails) and no field of this API needs it, so
// every input refuses it the same way on both engines: 400 naming the field.
//
// Validators and serializers are compiled once per process for each distinct schema (by its JSON):
// compiling them is most of what building the app costs (about 300 ms of 400), which a process
// building many apps (the tests build about 1,200) would otherwise pay each time; Fastify hands
// each app its own copy of a route's schema, so the objects themselves differ.
const validators = new Map<string, ReturnType<Ajv['compile']>>();

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const key = `${httpPart === 'body' ? 'body' : 'text'}:${JSON.stringify(schema)}`;
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object)));
  const check = Object.assign(
    (data: unknown) => {
      const ok = validate(data);
      check.errors = validate.errors;
      // A streamed body (a CSV upload: modules/imports) is read by its handler, never walked here.
      const at = ok && !(data instanceof Readable) ? nulAt(data) : null;
      if (at === null) return ok;
      check.errors = [
        {
          instancePath: at,
          schemaPath: '#',
          keyword: 'nul',
          params: {},
          message: 'must not contain the NUL character (U+0000)',
        },
      ];
      return false;
    },
    { errors: null as typeof validate.errors },
  );
  return check as any;
};

type SerializerFactory = ReturnType<typeof SerializerSelector>;
const serializers = new Map<string, ReturnType<ReturnType<SerializerFactory>>>();
const defaultSerializers = SerializerSelector();

/** Fastify's fast-json-stringify serializers (schemaController.compilersFactory), compiled once per process per schema. */
export const buildSerializer: SerializerFactory = (externalSchemas, serializerOpts) => {
  const compile = defaultSerializers(externalSchemas, serializerOpts);
  const shared = JSON.stringify([externalSchemas, serializerOpts]);
  return (route) => {
    const key = `${shared}:${JSON.stringify(route.schema)}`;
    let serialize = serializers.get(key);
    if (!serialize) serializers.set(key, (serialize = compile(route)));
    return serialize;
  };
};
