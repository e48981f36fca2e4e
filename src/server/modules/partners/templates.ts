import { Type, type Static } from 'typebox';

// The partner template library: ready integrations for the broker API shapes met most often in
// forex/crypto lead buying, with the field names their CRMs use. An operator picks one when
// creating a partner and fills in only the endpoint URL, the token and the names; the result is
// an ordinary integration, edited as any other. Each one is proven by templates.test.ts: accepted
// by the integration validator, and delivering to a loopback server shaped like it.

export const PartnerTemplate = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    auth_header: Type.String({
      description:
        'The header that carries the partner’s credential (its value is left empty: the operator fills it in)',
    }),
    integration: Type.Object(
      {
        method: Type.Union([Type.Literal('POST'), Type.Literal('GET'), Type.Literal('PUT')]),
        body_format: Type.Union([Type.Literal('json'), Type.Literal('form')]),
        headers: Type.Record(Type.String(), Type.String()),
        body_template: Type.Record(Type.String(), Type.String()),
        success_path: Type.String(),
        lead_id_path: Type.String(),
        autologin_path: Type.String(),
        timeout_ms: Type.Integer(),
      },
      { description: 'An integration without its URL (the operator gives it) and with empty header values' },
    ),
    answer_example: Type.String({
      description: 'What such a partner answers an accepted lead with (JSON text): the paths above read it',
    }),
  },
  { title: 'PartnerTemplate' },
);
export type PartnerTemplate = Static<typeof PartnerTemplate>;

const example = (answer: unknown) => JSON.stringify(answer, null, 2);

const subIds = (name: (n: number) => string) =>
  Object.fromEntries([1, 2, 3, 4, 5].map((n) => [name(n), `{{lead.sub_id${n}}}`]));

export const PARTNER_TEMPLATES: PartnerTemplate[] = [
  {
    id: 'json-token-header',
    name: 'JSON POST, API token in a header',
    description:
      'The most common broker CRM API: a JSON body in camelCase, the token in an Api-Key header; the answer says ' +
      'success and carries the lead id and the autologin URL under data.',
    auth_header: 'Api-Key',
    integration: {
      method: 'POST',
      body_format: 'json',
      headers: { 'Api-Key': '' },
      body_template: {
        firstName: '{{lead.first_name}}',
        lastName: '{{lead.last_name}}',
        email: '{{lead.email}}',
        phone: '{{lead.phone}}',
        country: '{{lead.country}}',
        ip: '{{lead.ip}}',
        language: '{{lead.language}}',
        funnel: '{{lead.funnel}}',
        clickId: '{{lead.id}}',
        ...subIds((n) => `affSub${n}`),
      },
      success_path: 'success',
      lead_id_path: 'data.leadId',
      autologin_path: 'data.autologinUrl',
      timeout_ms: 10_000,
    },
    answer_example: example({
      success: true,
      data: { leadId: 'L-1001', autologinUrl: 'https://broker.example/autologin?token=abc' },
    }),
  },
  {
    id: 'form-post',
    name: 'Form POST (x-www-form-urlencoded)',
    description:
      'Older CRMs and affiliate platforms: a form body in snake_case, the token in an X-Api-Key header; the answer ' +
      'says status "ok" with lead_id and auto_login_url at its top level.',
    auth_header: 'X-Api-Key',
    integration: {
      method: 'POST',
      body_format: 'form',
      headers: { 'X-Api-Key': '' },
      body_template: {
        first_name: '{{lead.first_name}}',
        last_name: '{{lead.last_name}}',
        email: '{{lead.email}}',
        phone: '{{lead.phone}}',
        country_code: '{{lead.country}}',
        ip_address: '{{lead.ip}}',
        language: '{{lead.language}}',
        offer: '{{lead.funnel}}',
        click_id: '{{lead.id}}',
        ...subIds((n) => `sub${n}`),
      },
      success_path: 'status',
      lead_id_path: 'lead_id',
      autologin_path: 'auto_login_url',
      timeout_ms: 10_000,
    },
    answer_example: example({ status: 'ok', lead_id: 'F-2002', auto_login_url: 'https://broker.example/login/F-2002' }),
  },
  {
    id: 'query-get',
    name: 'GET with a query string',
    description:
      'Simple tracker-style endpoints: every field in the query string (short names), the token in an ' +
      'X-Auth-Token header; the answer nests the lead under result.',
    auth_header: 'X-Auth-Token',
    integration: {
      method: 'GET',
      body_format: 'json',
      headers: { 'X-Auth-Token': '' },
      body_template: {
        fname: '{{lead.first_name}}',
        lname: '{{lead.last_name}}',
        email: '{{lead.email}}',
        phone: '{{lead.phone}}',
        country: '{{lead.country}}',
        ip: '{{lead.ip}}',
        lang: '{{lead.language}}',
        funnel: '{{lead.funnel}}',
        click_id: '{{lead.id}}',
        ...subIds((n) => `aff_sub${n}`),
      },
      success_path: 'result.accepted',
      lead_id_path: 'result.id',
      autologin_path: 'result.login_url',
      timeout_ms: 10_000,
    },
    answer_example: example({
      result: { accepted: 1, id: 3003, login_url: 'https://broker.example/go/3003' },
    }),
  },
];
