import { Type } from 'typebox';
import { newId } from '../../db/ids.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { IntegrationInput, resolveIntegration, shownRequest } from '../../distribution/integrations/index.js';
import type { LeadForPartner, StoredIntegration } from '../../distribution/integrations/types.js';
import { LEAD_TEMPLATE_FIELDS } from '../../distribution/template.js';
import type { App } from '../../types.js';
import { findPartner, storedIntegration } from './queries.js';
import { partnerBodyChecks } from './checks.js';

// "Send test lead": offers a sample lead to a partner once, as a delivery would, and shows what
// was sent and answered, so an operator can check an integration (saved or not yet) before real
// leads flow. It stores nothing: no lead, no attempt, no audit entry, no cap use.

/** What a test sends unless the request overrides it. 203.0.113.0/24 is a documentation range. */
const SAMPLE_LEAD: Omit<LeadForPartner, 'id'> = {
  first_name: 'Test',
  last_name: 'Lead',
  email: 'test.lead@example.com',
  phone: '+4915112345678',
  country: 'DE',
  ip: '203.0.113.10',
  language: 'de',
  funnel: 'test',
  sub_id1: null,
  sub_id2: null,
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
};

const Text = Type.String({ maxLength: 500 });
const NullableText = Type.Union([Text, Type.Null()]);

const TestLeadOverrides = Type.Object(
  {
    first_name: Type.Optional(Text),
    last_name: Type.Optional(Text),
    email: Type.Optional(Text),
    phone: Type.Optional(Text),
    country: Type.Optional(Text),
    ip: Type.Optional(Text),
    language: Type.Optional(NullableText),
    funnel: Type.Optional(NullableText),
    sub_id1: Type.Optional(NullableText),
    sub_id2: Type.Optional(NullableText),
    sub_id3: Type.Optional(NullableText),
    sub_id4: Type.Optional(NullableText),
    sub_id5: Type.Optional(NullableText),
  },
  {
    additionalProperties: false,
    description:
      `Fields replacing those of the built-in sample lead (${Object.entries(SAMPLE_LEAD)
        .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
        .join(', ')}). ` + 'The lead id ({{lead.id}}) is a new id on every test.',
  },
);

const TestPartnerBody = Type.Object(
  {
    lead: Type.Optional(TestLeadOverrides),
    integration: Type.Optional({
      ...IntegrationInput,
      description:
        'Test this integration instead of the saved one (e.g. from an editor before saving). Header values ' +
        "sent back masked, as answers show them, use the saved values, but only to the saved URL's scheme, " +
        'host and port (to another destination: 400, re-enter the secret).',
    }),
  },
  { additionalProperties: false, description: 'Everything is optional; the body may be left out.' },
);

const StringMap = (description: string) => Type.Object({}, { additionalProperties: Type.String(), description });

const TestPartnerResult = Type.Object(
  {
    request: Type.Object({
      method: Type.String(),
      url: Type.String(),
      headers: StringMap("As sent; the integration's header values masked"),
      body: Type.Union([Type.String(), Type.Null()], {
        description: 'The JSON body sent; null for GET (the template went into the query string)',
      }),
    }),
    response: Type.Union(
      [
        Type.Object({
          status: Type.Integer(),
          headers: StringMap("The partner's answer headers"),
          body: Type.String({ description: 'The first 64 KiB of the answer' }),
          truncated: Type.Boolean({
            description: 'The answer was not read in full (over 1 MiB, or cut off by the timeout)',
          }),
        }),
        Type.Null(),
      ],
      { description: 'null when no answer came (timeout, connection error)' },
    ),
    outcome: Type.Union(
      [Type.Literal('accepted'), Type.Literal('rejected'), Type.Literal('timeout'), Type.Literal('error')],
      {
        description: 'What a delivery would have concluded from this answer',
      },
    ),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is not accepted; null when accepted' }),
    duration_ms: Type.Integer(),
    partner_lead_id: Type.Union([Type.String(), Type.Null()], { description: 'Found at lead_id_path' }),
    autologin_url: Type.Union([Type.String(), Type.Null()], { description: 'Found at autologin_path' }),
  },
  { title: 'PartnerTestResult' },
);

const TestUnsavedBody = Type.Object(
  {
    lead: Type.Optional(TestLeadOverrides),
    integration: {
      ...IntegrationInput,
      description: 'The integration to test, as the partner editor holds it before the first save',
    },
  },
  { additionalProperties: false },
);

const SampleLead = Type.Object(
  {
    lead: Type.Object(Object.fromEntries(Object.keys(SAMPLE_LEAD).map((k) => [k, NullableText])), {
      description: 'What a test sends unless the request overrides it (the id is new on every test)',
    }),
    placeholders: Type.Array(
      Type.Object({
        placeholder: Type.String({ description: 'As written in a body template or URL, e.g. {{lead.email}}' }),
        field: Type.String(),
        example: Type.Union([Type.String(), Type.Null()], { description: "The sample lead's value" }),
      }),
      { description: 'Every lead field a template may name, in order' },
    ),
  },
  { title: 'PartnerSampleLead' },
);

const TEST_RULES =
  'Sends a sample lead once, exactly as a delivery would (real traffic: the partner may register it), ' +
  'and answers 200 with what was sent and answered and how a delivery would read it, whatever the ' +
  'outcome. Stores nothing. `lead` replaces fields of the sample lead (see getPartnerSampleLead). A destination the outbound guard refuses (loopback, ' +
  'private, link-local… outside PARTNER_ALLOWED_NETWORKS) is not called: outcome `error` with the reason.';

export default async function testPartnerRoute(app: App) {
  /** One test call: the integration given, the sample lead with the overrides; its secrets masked in the answer. */
  async function sendTest(integration: StoredIntegration, overrides: Partial<LeadForPartner> | undefined) {
    const lead: LeadForPartner = { ...SAMPLE_LEAD, ...overrides, id: newId() };
    // No transaction is open here: the partner call may take up to timeout_ms.
    const result = await app.delivery.deps.client.call(integration, lead);
    return { ...result, request: shownRequest(integration, result.request) };
  }
  const more = (body: unknown) => partnerBodyChecks(body, app.config.partnerAllowedNetworks);

  app.get(
    '/api/partners/sample-lead',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'getPartnerSampleLead',
        tags: ['Partners'],
        summary: 'The sample lead a test sends, and the placeholders a template may use',
        response: { 200: SampleLead },
      },
    },
    async () => ({
      lead: SAMPLE_LEAD,
      placeholders: LEAD_TEMPLATE_FIELDS.map((field) => ({
        placeholder: `{{lead.${field}}}`,
        field,
        example: field === 'id' ? 'a new id on every lead' : (SAMPLE_LEAD[field as keyof typeof SAMPLE_LEAD] ?? null),
      })),
    }),
  );

  app.post(
    '/api/partners/test',
    {
      config: { permission: 'partners:edit', moreChecks: more },
      schema: {
        operationId: 'testUnsavedPartner',
        tags: ['Partners'],
        summary: 'Send a test lead with an integration not saved yet',
        description: `For a partner being created: the integration comes with the request (no header value can be kept masked: nothing is stored). ${TEST_RULES}`,
        body: TestUnsavedBody,
        response: { 200: TestPartnerResult, ...problems(400) },
      },
    },
    async (req) => {
      const errors: FieldError[] = [];
      const integration = resolveIntegration(req.body.integration, null, errors, app.config.partnerAllowedNetworks);
      if (errors.length) invalid(errors);
      return sendTest(integration, req.body.lead);
    },
  );

  app.post(
    '/api/partners/:id/test',
    {
      config: { permission: 'partners:edit', moreChecks: more },
      schema: {
        operationId: 'testPartner',
        tags: ['Partners'],
        summary: 'Send a test lead to a partner',
        description:
          `${TEST_RULES} Works on a paused partner; an archived one answers 409. \`integration\` tests ` +
          'an unsaved integration instead of the saved one.',
        params: IdParams,
        body: TestPartnerBody,
        response: { 200: TestPartnerResult, ...problems(400, 404, 409) },
      },
      // No body at all is a test with the sample lead and the saved integration, like `{}`.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req) => {
      const partner = (await findPartner(app.db, req.params.id)) ?? notFound('partner');
      if (partner.archived_at)
        conflict('This partner is archived (deleted while leads refer to it): it cannot be tested.');
      const saved = storedIntegration(partner);
      let integration = saved;
      if (req.body.integration) {
        const errors: FieldError[] = [];
        integration = resolveIntegration(req.body.integration, saved, errors, app.config.partnerAllowedNetworks);
        if (errors.length) invalid(errors);
      }
      return sendTest(integration, req.body.lead);
    },
  );
}
