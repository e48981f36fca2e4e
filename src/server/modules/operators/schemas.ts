import { Type } from 'typebox';
import { MIN_PASSWORD_LENGTH } from '../../config.js';

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: 256,
  description: `At least ${MIN_PASSWORD_LENGTH} characters`,
});
export const PersonName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
// No `default` here: the validator fills defaults in, so on a PATCH schema it would reset an
// omitted time zone to UTC (and make an empty body non-empty). Only creation defaults it.
const timezoneOptions = { minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' };
export const Timezone = Type.String(timezoneOptions);
export const OperatorStatus = Type.Union([Type.Literal('active'), Type.Literal('disabled')]);

export const Operator = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role_id: Type.String(),
    role_name: Type.String(),
    status: OperatorStatus,
    timezone: Type.String(),
    two_factor: Type.Boolean({ description: 'Two-factor sign-in is on' }),
    admin: Type.Boolean({
      description: 'Holds the built-in admin role: only an admin, from a dashboard session, changes or deletes them',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Operator' },
);

export const CreateOperator = Type.Object(
  {
    email: Email,
    name: PersonName,
    password: Password,
    role_id: Type.String({ minLength: 1, maxLength: 100 }),
    timezone: Type.Optional(Type.String({ ...timezoneOptions, default: 'UTC' })),
    status: Type.Optional(OperatorStatus),
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          "Your own password (the acting operator's): creating an operator sets a password for a person. Missing or wrong: 400 naming it.",
      }),
    ),
  },
  { additionalProperties: false },
);

// What only a person may change, from a dashboard session, proving it with their own password.
const SESSION_ONLY =
  'Dashboard sessions only (an API key gets 403 `session_required`), and only with `current_password`.';

export const UpdateOperator = Type.Object(
  {
    email: Type.Optional(
      Type.String({ format: 'email', maxLength: 254, description: `Their sign-in. Changing it: ${SESSION_ONLY}` }),
    ),
    name: Type.Optional(PersonName),
    password: Type.Optional(
      Type.String({
        minLength: MIN_PASSWORD_LENGTH,
        maxLength: 256,
        description: `A new password for them (at least ${MIN_PASSWORD_LENGTH} characters); it ends all their sessions. ${SESSION_ONLY}`,
      }),
    ),
    role_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    timezone: Type.Optional(Timezone),
    status: Type.Optional(OperatorStatus),
    two_factor: Type.Optional(
      Type.Literal(false, {
        description:
          "false turns off the operator's two-factor sign-in (e.g. they lost their device and recovery codes) and ends all " +
          'their sessions; only they can turn it on, from their profile. Not for yourself: use your profile, which asks for a ' +
          `code. ${SESSION_ONLY}`,
      }),
    ),
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          "Your own password (the acting operator's), needed to set a password, change an email or turn off two-factor " +
          'sign-in. Missing or wrong: 400 naming it; wrong guesses count toward your login rate limit (429).',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
