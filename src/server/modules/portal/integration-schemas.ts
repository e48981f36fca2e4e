import { Type } from 'typebox';
import { Nullable } from '../../http/common-schemas.js';
import { Payout } from '../campaigns/schemas.js';

export const PortalCampaign = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    countries: Type.Array(Type.String(), { description: 'Countries the campaign takes; empty: every country' }),
    payout: Type.Union([Payout, Type.Null()], {
      description: 'What each lead earns you; null when your account manager does not show payouts',
    }),
  },
  { title: 'PortalCampaign' },
);

const Example = Type.Union([Type.String(), Type.Null()]);

export const IntakeDocs = Type.Object(
  {
    campaign: Type.Object({
      id: Type.String(),
      name: Type.String(),
      status: Type.String(),
      countries: Type.Array(Type.String()),
    }),
    method: Type.Literal('POST'),
    url: Type.String({ description: 'Where to post leads (absolute once the operator set the public address)' }),
    headers: Type.Array(
      Type.Object({
        name: Type.String(),
        required: Type.Boolean(),
        description: Type.String(),
        example: Type.String(),
      }),
    ),
    fields: Type.Array(
      Type.Object({
        name: Type.String(),
        required: Type.Boolean(),
        type: Type.Literal('string'),
        nullable: Type.Boolean({ description: 'null (or leaving the field out) is accepted' }),
        min_length: Nullable(Type.Integer({ format: 'int32' })),
        max_length: Nullable(Type.Integer({ format: 'int32' })),
        pattern: Nullable(Type.String()),
        description: Type.String({ description: 'Format and rules of the field' }),
        example: Example,
      }),
      { description: 'Every field of the request body, as the intake checks it' },
    ),
    example_body: Type.Record(Type.String(), Example),
    curl: Type.String({ description: 'A request to try: replace YOUR_INTAKE_TOKEN with your intake token' }),
    answers: Type.Array(
      Type.Object({
        http_status: Type.Integer({ format: 'int32' }),
        status: Nullable(Type.String({ description: "The lead's status (201 answers)" })),
        code: Nullable(Type.String({ description: 'The problem code (error answers, application/problem+json)' })),
        description: Type.String(),
        example: Type.Union([Type.Record(Type.String(), Example), Type.Null()]),
      }),
      { description: 'Every answer the intake can give' },
    ),
    answer_fields: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  },
  { title: 'IntakeDocs' },
);

export const RotatedIntakeToken = Type.Object(
  {
    token: Type.String({ description: 'The new intake token (lgt_…). Shown only in this answer.' }),
    token_prefix: Type.String(),
    intake_url: Type.String(),
    rotated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'RotatedIntakeToken' },
);
