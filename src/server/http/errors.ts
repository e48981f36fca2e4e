import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { RETRY_AFTER_S, unavailableReason } from '../db/unavailable.js';
import { countryProblem } from './countries.js';

export type ProblemCode =
  | 'unauthorized'
  | 'totp_required'
  | 'ip_not_allowed'
  | 'forbidden'
  | 'provider_paused'
  | 'insufficient_scope'
  | 'session_required'
  | 'scope_not_held'
  | 'not_found'
  | 'validation_failed'
  | 'conflict'
  | 'licence_invalid'
  | 'licence_expired'
  | 'licence_wrong_installation'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'unavailable'
  | 'internal_error';

const TITLES: Record<ProblemCode, string> = {
  unauthorized: 'Unauthorized',
  totp_required: 'Two-factor code required',
  ip_not_allowed: 'IP address not allowed',
  forbidden: 'Forbidden',
  provider_paused: 'Traffic provider paused',
  insufficient_scope: 'Insufficient scope',
  session_required: 'Dashboard session required',
  scope_not_held: 'Scope not held',
  not_found: 'Not found',
  validation_failed: 'Validation failed',
  conflict: 'Conflict',
  licence_invalid: 'Licence signature not valid',
  licence_expired: 'Licence expired',
  licence_wrong_installation: 'Licence is for another installation',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  method_not_allowed: 'Method not allowed',
  rate_limited: 'Too many requests',
  unavailable: 'Service unavailable',
  internal_error: 'Internal error',
};

export interface FieldError {
  field: string;
  message: string;
}

export const FieldErrorSchema = Type.Object({ field: Type.String(), message: Type.String() });

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable machine-readable code, e.g. insufficient_scope' }),
    detail: Type.String({ description: 'What went wrong, for a person' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'validation_failed: one entry per bad field' })),
  },
  { $id: 'Problem', title: 'Problem' },
);

/** Thrown anywhere in a request; the error handler turns it into problem+json. */
export class HttpProblem extends Error {
  constructor(
    public readonly status: number,
    public readonly code: ProblemCode,
    detail: string,
    public readonly errors?: FieldError[],
    public readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const notFound = (what: string): never => {
  throw new HttpProblem(404, 'not_found', `No ${what} with that id.`);
};
export const conflict = (detail: string): never => {
  throw new HttpProblem(409, 'conflict', detail);
};
export const invalid = (errors: FieldError[]): never => {
  throw new HttpProblem(
    400,
    'validation_failed',
    errors.map((e) => `${e.field} ${e.message}`).join('; ') + '.',
    errors,
  );
};

export function sendProblem(reply: FastifyReply, p: HttpProblem) {
  const body = {
    type: `urn:leadgate:problem:${p.code}`,
    title: TITLES[p.code],
    status: p.status,
    code: p.code,
    detail: p.message,
    ...(p.errors ? { errors: p.errors } : {}),
  };
  for (const [k, v] of Object.entries(p.headers)) reply.header(k, v);
  if (p.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="leadgate"');
  // Every 503 is temporary (an outage, a shutdown): say when to come back.
  if (p.status === 503 && !reply.hasHeader('retry-after')) reply.header('Retry-After', String(RETRY_AFTER_S));
  // Serialized here rather than by the route's schema so every error looks the same.
  return reply.status(p.status).type('application/problem+json; charset=utf-8').serializer(JSON.stringify).send(body);
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  /** With Ajv's verbose option: the value and the (sub)schema that refused it. */
  data?: unknown;
  parentSchema?: { format?: string };
}

// Ajv's "must NOT have fewer than 10 characters" reads as a shout in a form; these say the same
// plainly.
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const PLAIN_LIMITS: Record<string, (n: number) => string> = {
  minLength: (n) => (n === 1 ? 'must not be empty' : `must be at least ${plural(n, 'character')} long`),
  maxLength: (n) => `must be at most ${plural(n, 'character')} long`,
  minItems: (n) => `must have at least ${plural(n, 'item')}`,
  maxItems: (n) => `must have at most ${plural(n, 'item')}`,
  minProperties: (n) => `must have at least ${plural(n, 'field')}`,
  minimum: (n) => `must be at least ${n}`,
  maximum: (n) => `must be at most ${n}`,
  exclusiveMinimum: (n) => `must be more than ${n}`,
  exclusiveMaximum: (n) => `must be less than ${n}`,
};

// Ajv's "must be integer" and "must match format …" in the same plain words.
const PLAIN_TYPES: Record<string, string> = {
  integer: 'must be a whole number',
  number: 'must be a number',
  string: 'must be text',
  boolean: 'must be true or false',
  array: 'must be a list',
  object: 'must be an object',
  null: 'must be null',
};
const PLAIN_FORMATS: Record<string, string> = {
  'date-time': 'must be an ISO 8601 date-time with Z or an offset (e.g. 2026-01-31T12:00:00Z)',
  date: 'must be a date (YYYY-MM-DD)',
  email: 'must be an email address',
  uri: 'must be a URL',
  uuid: 'must be a UUID',
};

/** Ajv's message for a keyword without a case of its own, in plain words where one is known. */
function plainMessage(e: AjvError): string {
  if (e.keyword in PLAIN_LIMITS) return PLAIN_LIMITS[e.keyword](Number(e.params.limit));
  if (e.keyword === 'type' && typeof e.params.type === 'string' && e.params.type in PLAIN_TYPES)
    return PLAIN_TYPES[e.params.type];
  if (e.keyword === 'format' && typeof e.params.format === 'string' && e.params.format in PLAIN_FORMATS)
    return PLAIN_FORMATS[e.params.format];
  if (e.keyword === 'uniqueItems') return 'must not list the same item twice';
  if (e.keyword === 'multipleOf') return `must be a multiple of ${e.params.multipleOf}`;
  return e.message ?? 'is invalid';
}

/** Ajv errors → one entry per bad field; field is the body's JSON path or the parameter name. */
function fieldErrors(errors: AjvError[], context: string): FieldError[] {
  const seen = new Map<string, string>();
  const anyOfOnly = new Set<string>();
  // A nullable field ({…} | null) with a bad nested value also fails the null branch and the
  // anyOf: "x must be null" or "x does not match any allowed form" beside the real "x.y …"
  // errors only misleads, so those go when more telling errors remain.
  const isNullBranch = (e: AjvError) => e.keyword === 'type' && e.params.type === 'null';
  if (errors.some((e) => e.keyword !== 'anyOf' && !isNullBranch(e))) errors = errors.filter((e) => !isNullBranch(e));
  for (const e of errors) {
    let path = e.instancePath
      .replace(/^\//, '')
      .split('/')
      .filter(Boolean)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path = [...path, String(e.params.missingProperty)];
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      path = [...path, String(e.params.additionalProperty)];
      message = 'is not a known field';
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      message = `must be one of: ${e.params.allowedValues.join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(e.params.allowedValue)}`;
    } else if (e.keyword === 'pattern' && e.params.pattern === '\\S') {
      message = 'must not be blank'; // names: spaces only
    } else if (e.parentSchema?.format === 'country' && (e.keyword === 'format' || e.keyword === 'pattern')) {
      message =
        (typeof e.data === 'string' && countryProblem(e.data)) ||
        'is not an assigned ISO 3166-1 alpha-2 country code (e.g. DE, GB, US)';
    } else message = plainMessage(e);
    const field = path.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i ? `.${p}` : p)).join('') || context;
    // anyOf produces one error per branch; keep the first message per field.
    if (!seen.has(field) && e.keyword !== 'anyOf') seen.set(field, message);
    else if (!seen.has(field)) {
      seen.set(field, 'does not match any allowed form');
      anyOfOnly.add(field);
    }
  }
  const hasNested = (f: string) => [...seen.keys()].some((k) => k.startsWith(`${f}.`) || k.startsWith(`${f}[`));
  return [...seen]
    .filter(([field]) => !(anyOfOnly.has(field) && hasNested(field)))
    .map(([field, message]) => ({ field, message }));
}

const FASTIFY_CODES: Record<string, [number, ProblemCode, string, string?]> = {
  FST_ERR_BAD_URL: [400, 'validation_failed', 'The URL is not valid: a %-escape does not decode.', 'url'],
  FST_ERR_MAX_PARAM_LENGTH: [400, 'validation_failed', 'A path parameter is longer than the server accepts.', 'path'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'The request body is larger than the server accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'Send the body as application/json.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'validation_failed', 'Content-Length does not match the body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'validation_failed', 'The JSON body is empty.'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'validation_failed', 'The body is not valid JSON.'],
  FST_ERR_CTP_EMPTY_TYPE: [415, 'unsupported_media_type', 'Content-Type header is empty.'],
  FST_ERR_CTP_INVALID_TYPE: [415, 'unsupported_media_type', 'Content-Type header is not valid.'],
};

export function toProblem(
  err: FastifyError & { validation?: AjvError[]; validationContext?: string },
): HttpProblem | null {
  if (err instanceof HttpProblem) return err;
  // A unique or foreign-key constraint that a concurrent request won the race for.
  const dbCode = String((err as { code?: unknown }).code ?? '');
  if (dbCode === '23505' || dbCode === 'SQLITE_CONSTRAINT_UNIQUE' || dbCode === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new HttpProblem(409, 'conflict', 'That already exists.');
  }
  if (dbCode === '23503' || dbCode === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return new HttpProblem(409, 'conflict', 'That refers to, or is referred to by, a record that changed meanwhile.');
  }
  // The database is down, unreachable or cannot write (db/unavailable.ts): not a bug, retry later.
  // The detail never carries the driver's message (it may name hosts, paths or SQL).
  if (unavailableReason(err)) {
    return new HttpProblem(
      503,
      'unavailable',
      `The database cannot be reached or cannot write at the moment. Retry in ${RETRY_AFTER_S} seconds.`,
    );
  }
  if (err.validation) {
    const context = err.validationContext ?? 'body';
    const errors = fieldErrors(err.validation, context);
    return new HttpProblem(
      400,
      'validation_failed',
      `Invalid ${context}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
      errors,
    );
  }
  const known = err.code ? FASTIFY_CODES[err.code] : undefined;
  if (known) {
    const [status, code, detail] = known;
    return new HttpProblem(
      status,
      code,
      detail,
      code === 'validation_failed' ? [{ field: known[3] ?? 'body', message: detail }] : undefined,
    );
  }
  if (err instanceof SyntaxError || err.statusCode === 400) {
    return new HttpProblem(400, 'validation_failed', 'The request could not be read.', [
      { field: 'body', message: 'is not valid JSON' },
    ]);
  }
  if (err.statusCode === 503) return new HttpProblem(503, 'unavailable', 'The server is shutting down.');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new HttpProblem(err.statusCode, 'validation_failed', 'The request could not be processed.', [
      { field: 'request', message: err.message },
    ]);
  }
  return null;
}

/** Fastify's `frameworkErrors` option: errors raised before routing (a bad %-escape, an over-long path parameter). */
// Errors raised before routing run no hooks, so helmet's headers are not on them: the ones that
// matter for a JSON error are set here.
const PRE_ROUTING_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  reply.headers(PRE_ROUTING_HEADERS);
  const problem = toProblem(err);
  if (!problem) req.log.error({ err }, 'unhandled framework error');
  return sendProblem(
    reply,
    problem ?? new HttpProblem(500, 'internal_error', 'An unexpected error occurred; it has been logged.'),
  );
}

/**
 * A body its schema refused, with the route's other checks (config.moreChecks) added, so the
 * caller learns every bad field in one answer instead of one round per kind of check. A field
 * the schema already named keeps the schema's message; a check that trips over the unchecked
 * body adds nothing rather than turning the 400 into a 500.
 */
async function withMoreChecks(problem: HttpProblem, req: FastifyRequest): Promise<HttpProblem> {
  const more = req.routeOptions.config.moreChecks;
  if (!more || problem.code !== 'validation_failed') return problem;
  let extra: FieldError[];
  try {
    extra = await more(req.body, req);
  } catch (err) {
    req.log.debug({ err }, 'moreChecks on a refused body failed');
    return problem;
  }
  const named = new Set((problem.errors ?? []).map((e) => e.field));
  const errors = [...(problem.errors ?? []), ...extra.filter((e) => !named.has(e.field))];
  if (errors.length === problem.errors?.length) return problem;
  return new HttpProblem(
    400,
    'validation_failed',
    `Invalid body: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
    errors,
  );
}

/** Answers a request no route matched (the dashboard's files), or returns undefined: a 404 problem. */
export type NotFoundFallback = (req: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;

export function installErrorHandlers(app: FastifyInstance, fallback?: NotFoundFallback) {
  app.setErrorHandler(
    async (
      err: FastifyError & { validation?: unknown; validationContext?: string },
      req: FastifyRequest,
      reply: FastifyReply,
    ) => {
      let problem = toProblem(err);
      if (problem && err.validation && err.validationContext === 'body') problem = await withMoreChecks(problem, req);
      // An outage is not a bug, but the operator must see it: one line per refused request.
      if (problem?.code === 'unavailable' && !(err instanceof HttpProblem))
        req.log.warn({ reason: unavailableReason(err) }, 'database unavailable: answered 503');
      if (problem) return sendProblem(reply, problem);
      req.log.error({ err }, 'unhandled error');
      return sendProblem(
        reply,
        new HttpProblem(500, 'internal_error', 'An unexpected error occurred; it has been logged.'),
      );
    },
  );
  app.setNotFoundHandler(
    (req, reply) =>
      fallback?.(req, reply) ??
      sendProblem(reply, new HttpProblem(404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)),
  );
}
