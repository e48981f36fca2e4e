// The intake documentation a traffic provider reads in its portal, for one of its campaigns
// (issue 27). Generated from the intake's own schemas (modules/intake/schemas.ts): every field
// of the body, the headers, and the statuses of the answer come from there, so the documentation
// cannot drift from what POST /api/intake/leads takes. Only the example values and the error
// answers (decided by the guard and plugins, not by a schema) are written here.
import type { ProblemCode } from '../../http/errors.js';
import { IntakeAnswer, IntakeHeaders, IntakeLead, IntakeStatus } from '../intake/schemas.js';

export const INTAKE_PATH = '/api/intake/leads';
/** Stands for the provider's intake token in the examples (the server keeps only its hash). */
export const TOKEN_PLACEHOLDER = 'YOUR_INTAKE_TOKEN';

type Property = {
  description?: string;
  type?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  anyOf?: Property[];
};

/** The example value of each field; a field added to the schema without one gets a placeholder. */
const EXAMPLES: Record<string, string | null> = {
  first_name: 'Anna',
  last_name: 'Schmidt',
  email: 'anna.schmidt@example.com',
  phone: '+4915123456789',
  ip: '203.0.113.7',
  language: 'de',
  funnel: 'landing-1',
  sub_id1: 'click-123',
  sub_id2: 'banner-7',
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
};

/** The problems the intake can answer, with the code each carries. */
const ERRORS: { http_status: number; code: ProblemCode; description: string }[] = [
  {
    http_status: 400,
    code: 'validation_failed',
    description: 'The body is not valid: `errors` names every bad field (field, message) at once. Nothing is stored.',
  },
  {
    http_status: 401,
    code: 'unauthorized',
    description: 'No intake token, a malformed one, or one that is not valid (e.g. replaced by a rotation).',
  },
  { http_status: 403, code: 'provider_paused', description: 'Your account is paused: no lead is accepted.' },
  {
    http_status: 403,
    code: 'ip_not_allowed',
    description: 'The request came from an address outside the allowed addresses set for your account.',
  },
  {
    http_status: 409,
    code: 'conflict',
    description: 'The Idempotency-Key was already used for a different lead within 24 hours: send a new key.',
  },
  { http_status: 413, code: 'payload_too_large', description: 'The body is too large.' },
  { http_status: 415, code: 'unsupported_media_type', description: 'Send Content-Type: application/json.' },
  {
    http_status: 429,
    code: 'rate_limited',
    description: 'Too many requests from your address: wait the seconds in Retry-After.',
  },
  {
    http_status: 503,
    code: 'unavailable',
    description:
      'The server cannot store the lead now: retry after Retry-After with the same Idempotency-Key (no duplicate is made).',
  },
];

const props = IntakeLead.properties as unknown as Record<string, Property>;
const required = new Set<string>(IntakeLead.required ?? []);

/** The string schema behind a field (itself, or the string branch of string|null). */
const stringOf = (p: Property): Property => p.anyOf?.find((s) => s.type === 'string') ?? p;

function exampleOf(name: string, p: Property, country: string, campaignId: string): string | null {
  if (name === 'country') return country;
  if (name === 'campaign_id') return campaignId;
  if (name in EXAMPLES) return EXAMPLES[name];
  const nullable = p.anyOf?.some((s) => s.type === 'null') ?? false;
  return nullable ? null : 'example'.slice(0, stringOf(p).maxLength ?? 7);
}

/** The statuses a stored lead can have in the answer, each with what it means (from IntakeStatus). */
function statuses(): { status: string; description: string }[] {
  const text = (IntakeStatus as unknown as Property).description ?? '';
  const said = new Map<string, string>(
    text
      .split(/;\s+(?=\w+:)/)
      .map((part): [string, string] => [
        part.slice(0, part.indexOf(':')).trim(),
        part.slice(part.indexOf(':') + 1).trim(),
      ]),
  );
  return (IntakeStatus.anyOf as { const: string }[]).map(({ const: status }) => ({
    status,
    description: said.get(status) ?? '',
  }));
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The documentation of the intake for one campaign, its URL absolute when the public base URL is set. */
export function intakeDocs(campaign: { id: string; name: string; status: string; countries: string[] }, url: string) {
  const country = campaign.countries[0] ?? 'DE';
  const fields = Object.entries(props).map(([name, p]) => {
    const s = stringOf(p);
    return {
      name,
      required: required.has(name),
      type: 'string' as const,
      nullable: p.anyOf?.some((x) => x.type === 'null') ?? false,
      min_length: s.minLength ?? null,
      max_length: s.maxLength ?? null,
      pattern: s.pattern ?? null,
      description: p.description ?? s.description ?? '',
      example: exampleOf(name, p, country, campaign.id),
    };
  });
  const example_body = Object.fromEntries(fields.map((f) => [f.name, f.example]));
  const headerProps = IntakeHeaders.properties as unknown as Record<string, Property>;
  const headers = [
    {
      name: 'Authorization',
      required: true,
      description: `Bearer and your intake token (lgt_…), shown once when it is made or rotated; here ${TOKEN_PLACEHOLDER}`,
      example: `Bearer ${TOKEN_PLACEHOLDER}`,
    },
    { name: 'Content-Type', required: true, description: 'The body is JSON', example: 'application/json' },
    ...Object.entries(headerProps).map(([name, p]) => ({
      name: name.replace(/(^|-)(\w)/g, (_m, dash: string, c: string) => dash + c.toUpperCase()),
      required: ((IntakeHeaders.required ?? []) as string[]).includes(name),
      description: p.description ?? stringOf(p).description ?? '',
      example: name === 'idempotency-key' ? 'lead-0001' : '',
    })),
  ];
  const curl = [
    `curl -X POST ${shellQuote(url)}`,
    ...headers.filter((h) => h.example).map((h) => `  -H ${shellQuote(`${h.name}: ${h.example}`)}`),
    `  --data ${shellQuote(JSON.stringify(example_body))}`,
  ].join(' \\\n');
  const answer = (status: string) => ({
    id: '0190b1d2-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
    status,
    autologin_url: status === 'delivered' ? 'https://buyer.example/login?t=abc' : null,
    reason:
      status === 'rejected'
        ? 'no buyer accepted the lead'
        : status === 'duplicate'
          ? 'duplicate: an earlier lead has the same email'
          : status === 'failed'
            ? 'delivery broke off'
            : null,
  });
  return {
    campaign: { id: campaign.id, name: campaign.name, status: campaign.status, countries: campaign.countries },
    method: 'POST' as const,
    url,
    headers,
    fields,
    example_body,
    curl,
    answers: [
      ...statuses().map((s) => ({
        http_status: 201,
        status: s.status,
        code: null,
        description: s.description,
        example: answer(s.status),
      })),
      ...ERRORS.map((e) => ({ ...e, status: null, example: null })),
    ],
    answer_fields: Object.entries(IntakeAnswer.properties as unknown as Record<string, Property>).map(([name, p]) => ({
      name,
      description: p.description ?? '',
    })),
  };
}
