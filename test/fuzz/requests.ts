// Malformed requests for every operation of the served OpenAPI document: the inputs of
// test/fuzz.test.ts. Arbitraries only; sending and judging stay in the test.
import fc from 'fast-check';
import { ALL_PERMISSIONS } from '../../src/server/auth/permissions.js';
import { OWNER } from '../helpers.js';
// ---------------------------------------------------------------------------------------------
// The document

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: any;
}

export interface Operation {
  method: string;
  path: string;
  id: string;
  op: any;
  pathParams: Param[];
  queryParams: Param[];
  headerParams: Param[];
  bodySchema: any | undefined;
  isPublic: boolean;
  /** Takes a traffic provider's intake token (lgt_…), not a session or API key. */
  intake: boolean;
  /** A traffic provider's portal operation: a portal user's session or key, never an operator's. */
  portal: boolean;
}

export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const params: Param[] = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        id: op.operationId,
        op,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        headerParams: params.filter((p) => p.in === 'header'),
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
        isPublic: Array.isArray(op.security) && op.security.length === 0,
        intake: op['x-permission'] === 'intake-token',
        portal: String(op['x-permission']).startsWith('portal:'),
      });
    }
  }
  return ops;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const asciiText = (maxLength: number) => fc.string({ unit: printable, maxLength });

const NASTY = [
  '',
  ' ',
  '\t',
  '.',
  '..',
  '../',
  '../../etc/passwd',
  '..%2f..%2f',
  '%00',
  '\u0000',
  'a\u0000b',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '0',
  '-1',
  '1e999',
  'true',
  '[]',
  '{}',
  "' OR '1'='1",
  "'; drop table operators; --",
  '%',
  '%zz',
  '%2e%2e%2f',
  '\u202e',
  '😀',
  '\uD83D',
  'Ωmega',
  'ｆｕｌｌ',
  '\\',
  '"',
  '<script>alert(1)</script>',
  '$where',
  '{{lead.email}}',
  '__proto__',
  'constructor',
  'a'.repeat(101),
  'a'.repeat(257),
  'x'.repeat(5000),
  '\n',
  '\r\n',
];

// Values that mean something to this API, so bodies sometimes get past the schema.
const DOMAIN = [
  ...ALL_PERMISSIONS,
  'leads:destroy',
  'leads',
  ':view',
  'UTC',
  'Europe/Berlin',
  'Mars/Phobos',
  '127.0.0.1',
  '127.0.0.0/8',
  '::1',
  '::ffff:127.0.0.1',
  '0.0.0.0/0',
  '10.0.0.0/8',
  '1.2.3.4/33',
  '300.1.1.1',
  'fe80::/10',
  'active',
  'disabled',
  'expired',
  'revoked',
  'paused',
  'a-valid-name',
  'correct horse battery staple',
];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: asciiText(60) },
);

const HUGE_NUMBERS = [0, -1, -0, 1, 499, 500, 501, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 1.5, Number.MIN_VALUE];
const anyNumber = fc.oneof(
  fc.constantFrom(...HUGE_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom<unknown>(null, true, false, 0, '', [], {}, [null], { '': null }),
  nastyString,
  anyNumber,
);

const fieldName = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    '',
    ' ',
    'a.b',
    '[0]',
    'id',
    'password_hash',
    'secret',
    'builtin',
    'operator_id',
  ),
  asciiText(12),
);

const isoIn = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

function stringFor(schema: any): fc.Arbitrary<unknown> {
  if (schema.format === 'email') {
    return fc.oneof(
      fc.constantFrom(
        'a@b.co',
        'fuzz@example.test',
        'UPPER@Example.Test',
        ' spaced@example.test ',
        OWNER.email,
        'no-at',
        '@',
        'a@b',
        `${'a'.repeat(250)}@example.test`,
      ),
      nastyString,
    );
  }
  if (schema.format === 'date-time') {
    return fc.oneof(
      fc.constantFrom(
        isoIn(30),
        isoIn(-1),
        '2026-13-45T00:00:00Z',
        '2030-02-30T00:00:00Z',
        'not a date',
        '1970-01-01T00:00:00Z',
        '9999-12-31T23:59:59Z',
        '2030-01-01T00:00:00+14:00',
        '2030-01-01',
      ),
      fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString())),
      nastyString,
    );
  }
  return fc.oneof(
    { weight: 2, arbitrary: nastyString },
    { weight: 2, arbitrary: fc.constantFrom(...DOMAIN) },
    { weight: 1, arbitrary: asciiText(20) },
  );
}

/** Values roughly of the declared type (often valid, often just beside it). */
function typed(schema: any, depth: number, known: string[]): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: any) => typed(s, depth + 1, known)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return known.length && /(^|_)id$/.test(schema['x-name'] ?? '')
        ? fc.oneof(fc.constantFrom(...known), stringFor(schema))
        : stringFor(schema);
    case 'integer':
    case 'number':
      return fc.oneof(
        fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 1000, 1000) }),
        anyNumber,
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(loose(schema.items, depth + 1, known), { maxLength: 6 });
    case 'object': {
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries<any>(schema.properties ?? {}))
        model[k] = loose({ ...s, 'x-name': k }, depth + 1, known);
      const fields = fc.oneof(fc.record(model), fc.record(model, { requiredKeys: [] }));
      return fc
        .tuple(fields, fc.option(fc.dictionary(fieldName, anyJson, { maxKeys: 2 }), { freq: 4 }))
        .map(([o, extra]) => ({ ...o, ...(extra ?? {}) }));
    }
    default:
      return anyJson;
  }
}

const loose = (schema: any, depth: number, known: string[]) =>
  fc.oneof({ weight: 4, arbitrary: typed(schema, depth, known) }, { weight: 1, arbitrary: anyJson });

const CIDRS = [
  '127.0.0.1',
  '127.0.0.0/8',
  '::1',
  '::ffff:127.0.0.1',
  '0.0.0.0/0',
  '10.0.0.0/8',
  '1.2.3.4/33',
  '300.1.1.1',
  'fe80::/10',
  '192.0.2.1/32',
];
const TIMEZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Mars/Phobos', 'utc', 'Etc/GMT+5'];
const EMAILS = ['fuzz@example.test', 'Other.Fuzz@Example.Test', OWNER.email, 'x@y.co'];
const PHONES = ['+4915123456789', '0151 23456789', '+1 201 555 0123', '+44 7911 123456', '12345'];
const COUNTRIES = ['DE', 'de', 'GB', 'US', 'XX', 'EU'];

/** Values that satisfy the declared schema as far as a generator easily can: they reach the handlers. */
function validish(schema: any, name: string, depth: number, known: string[]): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: any) => validish(s, name, depth + 1, known)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'email') return fc.constantFrom(...EMAILS);
      if (schema.format === 'date-time') return fc.constantFrom(isoIn(30), isoIn(365), isoIn(-1));
      if (/ip|cidr|allowlist/i.test(name)) return fc.constantFrom(...CIDRS);
      if (/timezone/i.test(name)) return fc.constantFrom(...TIMEZONES);
      if (name === 'email') return fc.constantFrom(...EMAILS);
      if (name === 'phone') return fc.constantFrom(...PHONES);
      if (name === 'country') return fc.constantFrom(...COUNTRIES);
      if (/(^|_)id$/.test(name) && known.length) return fc.constantFrom(...known);
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, 40);
      const pattern = schema.pattern ? new RegExp(schema.pattern, 'u') : null;
      const ok = (v: string) =>
        v.length >= min && v.length <= (schema.maxLength ?? Infinity) && (!pattern || pattern.test(v));
      const pool = [...DOMAIN, ...EMAILS].filter(ok);
      // An anchored pattern (^[A-Z]{2}$, HH:MM) is almost never met by a random string: filter()
      // would spin for minutes per value. Generate from the pattern instead.
      const free =
        pattern && schema.pattern.startsWith('^')
          ? fc.stringMatching(pattern).filter(ok)
          : fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.max(min, max) }).filter(ok);
      return pool.length ? fc.oneof(fc.constantFrom(...pool), free) : free;
    }
    case 'integer':
    case 'number':
      return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 1000, 1000) });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? 5, Math.max(minLength, 5));
      const items = validish(schema.items, name, depth + 1, known);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const required = new Set<string>(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries<any>(schema.properties ?? {})) model[k] = validish(s, k, depth + 1, known);
      const optional = Object.keys(model).filter((k) => !required.has(k));
      return fc
        .record(model, { requiredKeys: [...required].filter((k) => k in model) })
        .filter((o) => Object.keys(o).length >= (schema.minProperties ?? 0) || optional.length === 0);
    }
    default:
      return fc.constant(null);
  }
}

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'text'; text: string };

const deepText = fc
  .tuple(
    fc.constantFrom(50, 1_000, 20_000),
    fc.constantFrom('[', '{"a":', '{"name":', '{"__proto__":', '{"ip_allowlist":'),
  )
  .map(([n, open]) => open.repeat(n) + '1' + (open === '[' ? ']' : '}').repeat(n));

const badJsonText = fc.oneof(
  fc.constantFrom(
    '{',
    '{"a":',
    'nul',
    '[1,]',
    "{'a':1}",
    '\u0000',
    '',
    ' ',
    '{"a":1}{"b":2}',
    '\uFEFF{}',
    '{"a":1,}',
    '1e99999',
    '"unterminated',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
  ),
  asciiText(40),
);

function bodyFor(o: Operation, known: string[]): fc.Arbitrary<Body> {
  const none = fc.constant<Body>({ kind: 'none' });
  const json = (a: fc.Arbitrary<unknown>) => a.map((value): Body => ({ kind: 'json', value }));
  const text = (a: fc.Arbitrary<string>) => a.map((t): Body => ({ kind: 'text', text: t }));
  if (!o.bodySchema) {
    // The operation takes no body; send one now and then anyway.
    return fc.oneof(
      { weight: 6, arbitrary: none },
      { weight: 1, arbitrary: json(anyJson) },
      { weight: 1, arbitrary: text(badJsonText) },
    );
  }
  return fc.oneof(
    { weight: 1, arbitrary: none },
    { weight: 2, arbitrary: json(anyJson) },
    { weight: 4, arbitrary: json(typed(o.bodySchema, 0, known)) },
    { weight: 4, arbitrary: json(validish(o.bodySchema, '', 0, known)) },
    { weight: 1, arbitrary: text(deepText) },
    { weight: 1, arbitrary: text(badJsonText) },
    {
      weight: 1,
      arbitrary: fc.constant<Body>({ kind: 'text', text: JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }) }),
    },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json;',
  'application/json; charset=',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/problem+json',
  'application/vnd.api+json',
  '*/*',
  'json',
  '',
  ';',
  'application/json, text/plain',
  'application/octet-stream',
];
export const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant<string | undefined>('application/json') },
  { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
  { weight: 4, arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES) },
  { weight: 1, arbitrary: asciiText(30) },
);

const garbageAuth = (valid: string) =>
  fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'Bearer',
      'Bearer ',
      'bearer',
      'Bearer lgs_',
      'Bearer lg_',
      'Bearer lgt_abcdefghijklmnop',
      'Bearer lgs_x_y',
      'Basic dXNlcjpwYXNz',
      `Bearer ${valid}x`,
      `Bearer ${valid.slice(0, -1)}`,
      `Bearer ${valid} ${valid}`,
      `Token ${valid}`,
      valid,
      `Bearer ${'a'.repeat(5000)}`,
      `Bearer lgs_${'0'.repeat(200)}`,
      'Bearer %00',
      'Bearer null',
      'Bearer \t',
    ),
    asciiText(80),
    asciiText(60).map((s) => `Bearer ${s}`),
    asciiText(40).map((s) => `Bearer lg_${s}`),
  );

const extraHeaders = fc.record(
  {
    accept: fc.constantFrom('application/xml', '*/*', 'text/html', '', 'application/problem+json', 'garbage'),
    'accept-version': fc.constantFrom('1.x', '*', 'garbage'),
    'accept-encoding': fc.constantFrom('gzip', 'br;q=2', 'identity;q=0', 'garbage'),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'garbage'),
    'x-forwarded-for': fc.constantFrom('10.0.0.1', 'garbage', '1.2.3.4, 5.6.7.8'),
    'user-agent': fc.oneof(asciiText(20), fc.constant('u'.repeat(10_000))),
    host: fc.constantFrom('', 'example.test:99999', '[::1', 'a b'),
  },
  { requiredKeys: [] },
);

export interface FuzzRequest {
  pathValues: { value: string; raw: boolean }[];
  query: { entries: [string, string][]; raw: boolean };
  body: Body;
  contentType: string | undefined;
  authorization: string | undefined; // undefined: the property's own credential
  headers: Record<string, string>;
}

const RAW_PATH = ['', '.', '..', '../', '..%2F', '%00', '%zz', '%', '//', 'a/b', ';', '%2e%2e', 'a?b=c', 'a#b', '*'];
const GARBAGE_CURSORS = [
  'x',
  '====',
  Buffer.from('{}').toString('base64url'),
  Buffer.from('{"id":5}').toString('base64url'),
  Buffer.from('{"id":"\\u0000"}').toString('base64url'),
  Buffer.from('{"id":"zzz"}').toString('base64url'),
  Buffer.from('[1,2]').toString('base64url'),
  Buffer.from('null').toString('base64url'),
  Buffer.from('"id"').toString('base64url'),
  Buffer.from('{"id":"x","__proto__":{"a":1}}').toString('base64url'),
  Buffer.from('{"id":"' + 'z'.repeat(400) + '"}').toString('base64url'),
];

export function requestFor(o: Operation, known: string[], credential: string): fc.Arbitrary<FuzzRequest> {
  const pathValue = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known).map((value) => ({ value, raw: false })) },
    { weight: 6, arbitrary: nastyString.map((value) => ({ value, raw: false })) },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: 'grapheme', minLength: 150, maxLength: 260 })
        .map((value) => ({ value, raw: false })),
    },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_PATH).map((value) => ({ value, raw: true })) },
  );
  const queryValue = fc.oneof(
    nastyString,
    anyNumber.map(String),
    fc.constantFrom('1e3', '0x10', '1.5', '-0', '501', '99999999999999999999999', 'true', 'false', 'null', ''),
    fc.constantFrom(...GARBAGE_CURSORS),
    fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url')),
  );
  const declared = o.queryParams.map((p) => p.name);
  const queryKey = fc.oneof(
    {
      weight: declared.length ? 5 : 0,
      arbitrary: declared.length ? fc.constantFrom(...declared) : fc.constant('limit'),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('limit', 'cursor', 'all', 'status', 'unknown', 'limit[]', '__proto__', '', 'a.b'),
    },
    { weight: 1, arbitrary: nastyString },
  );
  return fc.record({
    pathValues: fc.array(pathValue, { minLength: o.pathParams.length, maxLength: o.pathParams.length }),
    query: fc.record({ entries: fc.array(fc.tuple(queryKey, queryValue), { maxLength: 5 }), raw: fc.boolean() }),
    body: bodyFor(o, known),
    contentType,
    authorization: fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: garbageAuth(credential) },
    ),
    headers: fc
      .tuple(
        fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extraHeaders }),
        declaredHeaders(o, known),
      )
      .map(([extra, declared]) => ({ ...extra, ...declared })),
  });
}

/** Values for the header parameters an operation declares (Idempotency-Key): valid ones, and printable junk. */
function declaredHeaders(o: Operation, known: string[]): fc.Arbitrary<Record<string, string>> {
  const model = Object.fromEntries(
    o.headerParams.map((p) => [
      p.name,
      fc.oneof(
        validish(p.schema, p.name, 0, known).map(String),
        asciiText(40),
        fc.constantFrom('', ' ', 'a b', 'x'.repeat(300), 'ÿ'),
      ),
    ]),
  );
  return fc.record(model, { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
}
