import { Type, type Static } from 'typebox';
import type { FieldError } from '../../http/errors.js';
import { compilePath, LEAD_TEMPLATE_FIELDS, renderUrl, renderValue } from '../template.js';
import { errorMessage, excerpt, isHttpUrl, isTruthy } from './answers.js';
import { checkUrl, originOf } from './destination-url.js';
import { MAX_ANSWER_BYTES, type IntegrationKind, type Verdict } from './kind.js';
import {
  CLIENT_OWNED_HEADERS,
  headerNameProblem,
  maskHeaders,
  maskHeaderValue,
  resolveSecretHeaders,
} from './secret-headers.js';

// The templated HTTP API: a JSON or form body (for GET, a query string) rendered from a template
// with {{lead.<field>}} placeholders, sent with the operator's headers to a URL (itself a
// template); the answer is accepted on any 2xx, or on a truthy value at a dot path, and may
// carry the partner's lead id and an autologin URL at dot paths.

const DEFAULT_TIMEOUT_MS = 5000;

/** Stored form (partners.integration JSON; header values sealed there, in full once read: integrationFromStore). Stored without `kind`. */
export interface HttpApiIntegration {
  kind?: 'http-api';
  method: 'POST' | 'GET' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body_template: Record<string, unknown>;
  /** How a POST/PUT body is encoded; stored integrations without it are 'json'. */
  body_format?: BodyFormat;
  success_path: string;
  lead_id_path: string;
  autologin_path: string;
  timeout_ms: number;
}

// Dot paths into the partner's JSON answer ("data.id", "items.0.url"); "" = not used.
const DotPath = (description: string) =>
  Type.String({ maxLength: 200, pattern: '^([^.\\s]+(\\.[^.\\s]+)*)?$', description });

const Method = Type.Union([Type.Literal('POST'), Type.Literal('GET'), Type.Literal('PUT')]);

type BodyFormat = 'json' | 'form';
const BodyFormat = Type.Union([Type.Literal('json'), Type.Literal('form')], {
  description:
    'How a POST or PUT body is sent: json (application/json), or form (application/x-www-form-urlencoded: the ' +
    "template's top-level values, nested ones left out). GET sends a query string either way.",
});

const integrationFields = {
  method: Method,
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: "http or https URL of the partner's lead API. Shown in full to readers: put secrets in headers.",
  }),
  success_path: DotPath('Dot path to a truthy value in the answer that means "accepted"; empty: any 2xx is accepted'),
  lead_id_path: DotPath("Dot path to the partner's own lead id in the answer; empty: none"),
  autologin_path: DotPath('Dot path to the autologin URL in the answer; empty: none'),
  timeout_ms: Type.Integer({
    format: 'int32',
    minimum: 100,
    maximum: 60_000,
    description: 'Request timeout (100–60000 ms)',
  }),
};

const BodyTemplate = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'The body sent to the partner (see body_format); with GET, its top-level values form the query string. ' +
      'Strings may hold {{lead.<field>}} placeholders, ' +
      `field one of: ${LEAD_TEMPLATE_FIELDS.join(', ')}.`,
  },
);

/** What an answer shows: header values masked. */
export const HttpApiShown = Type.Object(
  {
    ...integrationFields,
    body_format: Type.Optional(BodyFormat),
    headers: Type.Object(
      {},
      {
        additionalProperties: Type.String(),
        description:
          'Header values are write-only: shown masked ("••••" + the last 4 characters when longer than 8, else "••••")',
      },
    ),
    body_template: BodyTemplate,
  },
  { title: 'PartnerIntegration' },
);

/** What a request sends. Defaults fill in whatever is left out. */
export const HttpApiInput = Type.Object(
  {
    method: Type.Optional({ ...Method, default: 'POST' }),
    url: integrationFields.url,
    headers: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: Type.String({ maxLength: 4096 }),
          maxProperties: 50,
          default: {},
          description:
            'Request headers (name → value). Values are write-only. On PATCH, a value sent back exactly as ' +
            "answers show it (masked) keeps the stored value of that header while the URL's scheme, host and " +
            'port stay the same (a masked value for a new destination is refused); any other value replaces it.',
        },
      ),
    ),
    body_template: Type.Optional({ ...BodyTemplate, default: {} }),
    body_format: Type.Optional({ ...BodyFormat, default: 'json' }),
    success_path: Type.Optional({ ...integrationFields.success_path, default: '' }),
    lead_id_path: Type.Optional({ ...integrationFields.lead_id_path, default: '' }),
    autologin_path: Type.Optional({ ...integrationFields.autologin_path, default: '' }),
    timeout_ms: Type.Optional({ ...integrationFields.timeout_ms, default: DEFAULT_TIMEOUT_MS }),
  },
  { additionalProperties: false, title: 'PartnerIntegrationInput' },
);
/** The schema has no `kind` field: an input without one is http-api. */
export type HttpApiInput = Static<typeof HttpApiInput> & { kind?: 'http-api' };

const PLACEHOLDER = /\{\{(.*?)\}\}/g;
const KNOWN_FIELDS = new Set<string>(LEAD_TEMPLATE_FIELDS);
const MAX_TEMPLATE_DEPTH = 20;

const childPath = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;

/** Every {{…}} placeholder in the template must be {{lead.<known field>}}. */
function checkTemplate(value: unknown, path: string, depth: number, errors: FieldError[]) {
  if (errors.length >= 50) return;
  if (typeof value === 'string') {
    for (const m of value.matchAll(PLACEHOLDER)) {
      const name = /^lead\.([A-Za-z0-9_]+)$/.exec(m[1])?.[1];
      if (!name || !KNOWN_FIELDS.has(name)) {
        errors.push({
          field: path,
          message: `placeholder ${m[0]} names no lead field; use {{lead.<field>}} with one of: ${LEAD_TEMPLATE_FIELDS.join(', ')}`,
        });
        return;
      }
    }
    if (value.replace(PLACEHOLDER, '').includes('{{'))
      errors.push({ field: path, message: 'has a {{ without its closing }}' });
    return;
  }
  if (!value || typeof value !== 'object') return;
  if (depth > MAX_TEMPLATE_DEPTH) {
    errors.push({ field: path, message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels` });
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => checkTemplate(v, childPath(path, i), depth + 1, errors));
  else for (const [k, v] of Object.entries(value)) checkTemplate(v, childPath(path, k), depth + 1, errors);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function hasHeader(headers: Record<string, string>, lowerName: string) {
  for (const name of Object.keys(headers)) if (name.toLowerCase() === lowerName) return true;
  return false;
}

/** Top-level scalars only: a query string or form has no nesting. null (no value) leaves the parameter out. */
function appendScalars(params: URLSearchParams, rendered: Record<string, unknown>) {
  for (const [k, v] of Object.entries(rendered))
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') params.append(k, String(v));
}

function formBody(rendered: Record<string, unknown>) {
  const form = new URLSearchParams();
  appendScalars(form, rendered);
  return form.toString();
}

const reject = (reason: string, partner_lead_id: string | null = null): Verdict => ({
  outcome: 'rejected',
  reason,
  partner_lead_id,
});

export const httpApi: IntegrationKind<HttpApiIntegration, HttpApiInput> = {
  buildRequest(integration, lead) {
    let url = renderUrl(integration.url, lead);
    const headers: Record<string, string> = {};
    let body: string | null = null;
    const rendered = renderValue(integration.body_template ?? {}, lead) as Record<string, unknown>;
    if (integration.method === 'GET') {
      const u = new URL(url);
      appendScalars(u.searchParams, rendered);
      url = u.href;
    } else {
      const form = integration.body_format === 'form';
      body = form ? formBody(rendered) : JSON.stringify(rendered);
      if (!hasHeader(integration.headers, 'content-type'))
        headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
    }
    for (const [name, value] of Object.entries(integration.headers)) {
      if (!CLIENT_OWNED_HEADERS.has(name.toLowerCase())) headers[name] = value;
    }
    return { method: integration.method, url, headers, body };
  },

  unbuiltRequest: (integration) => ({ method: integration.method, url: integration.url, headers: {}, body: null }),

  timeoutMs: (integration) => integration.timeout_ms,

  readAnswer(integration, answer, text): Verdict {
    if (answer.status < 200 || answer.status > 299) {
      // Redirects are not followed (a POST must not be replayed elsewhere); say where it pointed,
      // since "http:// instead of https://" is the usual cause.
      const location = answer.status >= 300 && answer.status < 400 ? answer.headers.location : undefined;
      return reject(`HTTP ${answer.status}${location ? ` (redirects to ${excerpt(location)})` : ''}: ${excerpt(text)}`);
    }
    const { success_path, lead_id_path, autologin_path } = integration;
    if (!success_path && !lead_id_path && !autologin_path) return { outcome: 'accepted', reason: null };

    if (answer.truncated)
      return reject(`answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB: not read in full`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return reject(`answer is not JSON: ${excerpt(text)}`);
    }
    const leadId = lead_id_path ? compilePath(lead_id_path)(json) : undefined;
    const partner_lead_id = typeof leadId === 'string' || typeof leadId === 'number' ? String(leadId) : null;

    if (success_path) {
      const flag = compilePath(success_path)(json);
      if (!isTruthy(flag)) {
        const said = errorMessage(json);
        const what =
          flag === undefined
            ? `no success value at "${success_path}"`
            : `success is ${JSON.stringify(flag)} at "${success_path}"`;
        return reject(said ? `${what} (error: ${said})` : what, partner_lead_id);
      }
    }
    let autologin_url: string | null = null;
    if (autologin_path) {
      const link = compilePath(autologin_path)(json);
      if (link === undefined || link === null || link === '')
        return reject(`no autologin URL at ${autologin_path}`, partner_lead_id);
      if (!isHttpUrl(link))
        return reject(
          `autologin value at ${autologin_path} is not an http(s) URL: ${excerpt(JSON.stringify(link))}`,
          partner_lead_id,
        );
      autologin_url = link;
    }
    return { outcome: 'accepted', reason: null, partner_lead_id, autologin_url };
  },

  resolve(input, previous, errors, allowedNetworks) {
    checkUrl(input.url, allowedNetworks, errors, 'integration.url');
    const origin = originOf(input.url);
    const sameDestination = previous !== null && origin !== null && origin === originOf(previous.url);
    const headers = resolveSecretHeaders(
      (input.headers ?? {}) as Record<string, string>,
      previous?.headers ?? {},
      sameDestination,
      'integration.headers',
      errors,
    );
    const body_template = (input.body_template ?? {}) as Record<string, unknown>;
    checkTemplate(body_template, 'integration.body_template', 1, errors);
    return {
      method: input.method ?? 'POST',
      url: input.url,
      headers,
      body_template,
      body_format: input.body_format ?? 'json',
      success_path: input.success_path ?? '',
      lead_id_path: input.lead_id_path ?? '',
      autologin_path: input.autologin_path ?? '',
      timeout_ms: input.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    };
  },

  // Header values are left to resolve (a masked value needs the stored integration).
  bodyErrors(i, allowedNetworks, errors) {
    if (!isObject(i)) return;
    if (typeof i.url === 'string') checkUrl(i.url, allowedNetworks, errors, 'integration.url');
    if (isObject(i.headers)) {
      const seen = new Set<string>();
      for (const name of Object.keys(i.headers)) {
        const problem = headerNameProblem(name, seen);
        if (problem) errors.push({ field: `integration.headers.${name}`, message: problem });
      }
    }
    if (i.body_template !== undefined) checkTemplate(i.body_template, 'integration.body_template', 1, errors);
  },

  shown: (integration) => ({
    ...integration,
    body_format: integration.body_format ?? 'json',
    headers: maskHeaders(integration.headers),
  }),

  shownRequest(integration, request) {
    // Mask what the integration set (its values may be API keys); what the client adds itself
    // (content-type) is no secret.
    const secret = new Set(Object.keys(integration.headers));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers))
      headers[name] = secret.has(name) ? maskHeaderValue(value) : value;
    return { ...request, headers };
  },

  // Which headers are set, never their values.
  forAudit: (integration) => ({ ...integration, headers: Object.keys(integration.headers) }),
};
