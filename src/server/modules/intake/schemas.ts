import { Type, type Static } from 'typebox';

// The request schema checks types and lengths only; what needs more than a schema (email and
// phone syntax, the country list, IP addresses, the campaign) is checked in validate.ts, and
// both sets of errors come back together in one 400.

const Name = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '\\S',
    description: `${what}; 1–100 characters, not blank; trimmed`,
  });

const Optional = (maxLength: number, description: string) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength }), Type.Null()], { description: `${description}; trimmed, empty = null` }),
  );

const subIds = Object.fromEntries(
  [1, 2, 3, 4, 5].map((i) => [`sub_id${i}`, Optional(500, `Your own tracking value ${i} (at most 500 characters)`)]),
) as Record<`sub_id${1 | 2 | 3 | 4 | 5}`, ReturnType<typeof Optional>>;

export const IntakeLead = Type.Object(
  {
    first_name: Name('First name'),
    last_name: Name('Last name'),
    email: Type.String({ minLength: 1, maxLength: 254, description: 'Email address; stored trimmed and lower-cased' }),
    phone: Type.String({
      minLength: 1,
      maxLength: 32,
      description:
        "International (+49 151 23456789) or national format of the lead's country (0151 23456789 with country DE); " +
        'must be a valid number; stored as E.164 (+4915123456789)',
    }),
    country: Type.String({
      minLength: 2,
      maxLength: 2,
      pattern: '^[A-Za-z]{2}$',
      description: 'ISO 3166-1 alpha-2 code, any case (stored upper case), e.g. DE',
    }),
    ip: Type.String({
      minLength: 1,
      maxLength: 45,
      description: "The lead's IPv4 or IPv6 address (IPv4-mapped IPv6 is stored as IPv4)",
    }),
    campaign_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
        description: 'One of your campaigns; may be left out when you have exactly one active campaign',
      }),
    ),
    language: Optional(35, 'Language tag, e.g. de or de-AT (at most 35 characters)'),
    funnel: Optional(200, 'Funnel or landing page name (at most 200 characters)'),
    ...subIds,
  },
  { additionalProperties: false, title: 'IntakeLead' },
);

/** Visible ASCII, as the header's documentation says. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$';

export const IntakeHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: IDEMPOTENCY_KEY_PATTERN,
        description:
          'Optional; 1–255 visible ASCII characters, unique per lead you send. A retry with the same key within 24 hours ' +
          "creates nothing new and answers the lead's current state; the same key with a different lead is refused (409).",
      }),
    ),
  },
  { additionalProperties: true },
);

export const IntakeStatus = Type.Union(
  [
    Type.Literal('delivered'),
    Type.Literal('rejected'),
    Type.Literal('duplicate'),
    Type.Literal('pending'),
    Type.Literal('failed'),
  ],
  {
    description:
      'delivered: a buyer took the lead (autologin_url is theirs); rejected: no buyer took it, or the campaign does not accept it; ' +
      'duplicate: an earlier lead has the same email or phone; pending: still being delivered, or held for review ' +
      '(reason says so; look it up later); ' +
      'failed: delivery broke off (a retry answer only), the lead is kept',
  },
);

export const IntakeAnswer = Type.Object(
  {
    id: Type.String({ description: "Leadgate's id of the lead" }),
    status: IntakeStatus,
    autologin_url: Type.Union([Type.String(), Type.Null()], {
      description:
        "The buyer's autologin URL when delivered, else null. It may be a link of this server (/go/…) that redirects " +
        'to the buyer, the same link every time the lead is answered; it may open only once',
    }),
    reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the lead is not delivered (null when delivered or being delivered; "the lead is held for review" when held)',
    }),
  },
  { title: 'IntakeAnswer' },
);
export type IntakeAnswer = Static<typeof IntakeAnswer>;
