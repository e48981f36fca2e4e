import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  allErrors: true, // report every bad field at once, not only the first
  removeAdditional: false, // unknown fields are refused by additionalProperties:false, never silently dropped
  useDefaults: true,
  strict: false,
  keywords: ['x-example'],
};

// Bodies are JSON and must carry the right types; query strings, path parameters and headers
// are text and are coerced ("limit=10" → 10, "status=a" → ["a"]).
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as any;
