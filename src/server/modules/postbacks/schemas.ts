import { Type } from 'typebox';

// What a partner's postback system sends. Those systems fill URL or form templates, so every
// value may arrive as text; a JSON body may also use native types (true, 250.5, 12345).
//
// Unknown parameters are accepted and ignored here, unlike everywhere else in this API (where
// additionalProperties: false turns a typo into a 400). A postback template is configured once,
// in the partner's system, and usually carries extras of its own (click ids, their campaign,
// a "payout" field): refusing those would drop every conversion of that partner, and nobody
// would see the 400s. So the schemas below leave additionalProperties open, and the handler
// reads only the fields it knows.

const LEAD_ID =
  'The Leadgate lead id (the {{lead.id}} sent to the partner). Give lead_id or partner_lead_id, not both.';
const PARTNER_LEAD_ID =
  "The partner's own id for the lead (from its answer when the lead was delivered). Give lead_id or partner_lead_id, not both.";
const SALE_STATUS =
  'The lead\'s sale status in the partner\'s words (at most 100 characters), e.g. "Interested", "No answer"; stored as sent.';
const FTD = 'true when the lead made its first deposit: true, false, 1, 0, yes or no (any case).';
const FTD_AT =
  'When the first deposit was made: ISO 8601 date-time with Z or an offset (e.g. 2026-11-22T10:15:00Z); default: now. At most 5 minutes in the future, and not before 2000.';
const REVENUE =
  'What the partner pays for the FTD, in USD: a decimal with at most 2 decimals, ≥ 0 (e.g. 250 or 250.50). Recorded only with ftd=true.';
const EMPTY = ' An empty value counts as not sent (templates often leave a macro empty).';

const text = (maxLength: number, description: string) =>
  Type.Optional(Type.String({ maxLength, description: description + EMPTY }));

/** GET: everything is text. */
export const PostbackQuery = Type.Object(
  {
    lead_id: text(100, LEAD_ID),
    partner_lead_id: text(200, PARTNER_LEAD_ID),
    sale_status: text(100, SALE_STATUS),
    ftd: text(10, FTD),
    ftd_at: text(40, FTD_AT),
    revenue: text(40, REVENUE),
  },
  { additionalProperties: true, description: 'Unknown parameters are ignored.' },
);

/** POST: JSON (native types allowed) or an HTML form (text). */
export const PostbackBody = Type.Object(
  {
    lead_id: text(100, LEAD_ID),
    partner_lead_id: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 200 }),
          Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
        ],
        { description: PARTNER_LEAD_ID + EMPTY },
      ),
    ),
    sale_status: text(100, SALE_STATUS),
    ftd: Type.Optional(
      Type.Union(
        [Type.Boolean(), Type.Integer({ format: 'int32', minimum: 0, maximum: 1 }), Type.String({ maxLength: 10 })],
        { description: FTD + EMPTY },
      ),
    ),
    ftd_at: text(40, FTD_AT),
    revenue: Type.Optional(
      Type.Union([Type.Number(), Type.String({ maxLength: 40 })], { description: REVENUE + EMPTY }),
    ),
  },
  { additionalProperties: true, title: 'Postback', description: 'Unknown fields are ignored.' },
);

export const PostbackParams = Type.Object(
  {
    token: Type.String({ maxLength: 200, description: "The partner's postback token (lgp_…), as in its postback_url" }),
  },
  { additionalProperties: false },
);

export const PostbackResult = Type.Object(
  {
    lead_id: Type.String(),
    changed: Type.Boolean({
      description: 'false when the lead already held everything this postback reports (a repeat changes nothing)',
    }),
    sale_status: Type.Union([Type.String(), Type.Null()], { description: "The lead's sale status now" }),
    ftd_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "The lead's FTD time now (the first FTD reported wins)",
    }),
    revenue: Type.Number({ description: "The lead's revenue now, in USD" }),
    notes: Type.Array(Type.String(), {
      description: 'What this postback reported but did not change, and why (e.g. an FTD already recorded)',
    }),
  },
  { title: 'PostbackResult' },
);
