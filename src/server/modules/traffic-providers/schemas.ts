import { Type, type Static } from 'typebox';
import {
  ActiveStatus,
  NullableTimestamp,
  ResourceListQuery,
  ResourceName,
  Timestamp,
} from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { DEFAULT_VELOCITY_POLICY, VelocityPolicy } from '../quality/velocity.js';
import { DEFAULT_REVIEW_RULE, ReviewRule, ReviewRuleInput } from '../quality/review-rule.js';

export interface StoredDuplicatePolicy {
  fields: ('email' | 'phone')[];
  window_hours: number;
  scope: 'provider' | 'global';
}

export const DEFAULT_DUPLICATE_POLICY: StoredDuplicatePolicy = {
  fields: ['email', 'phone'],
  window_hours: 720,
  scope: 'provider',
};

export const DuplicatePolicy = Type.Object(
  {
    fields: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('phone')]), {
      uniqueItems: true,
      maxItems: 2,
      description: 'A lead is a duplicate when one of these matches an earlier lead; empty: no duplicate check',
    }),
    window_hours: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 8760,
      description: 'How far back to look (0–8760 hours)',
    }),
    scope: Type.Union([Type.Literal('provider'), Type.Literal('global')], {
      description: "provider: earlier leads of this provider only; global: every provider's leads",
    }),
  },
  { additionalProperties: false, title: 'DuplicatePolicy' },
);

const ALLOWED_IPS =
  'CIDRs (IPv4 or IPv6; a bare address means that one address) allowed to post leads; empty: any address';
const AllowedIps = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 500, description: ALLOWED_IPS });

const providerFields = {
  id: Type.String(),
  name: Type.String(),
  status: ActiveStatus,
  allowed_ips: Type.Array(Type.String(), { description: 'Canonical CIDRs; empty: any address' }),
  duplicate_policy: DuplicatePolicy,
  velocity: VelocityPolicy,
  review: ReviewRule,
  silent_after_hours: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Alerted when no lead came for this many hours; null: never',
  }),
  token_prefix: Type.String({ description: 'The non-secret start of the intake token (lgt_ + id), to recognise it' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  archived_at: { ...NullableTimestamp, description: 'Set when deleted while leads or campaigns still refer to it' },
};

export const TrafficProvider = Type.Object(providerFields, { title: 'TrafficProvider' });
export type TrafficProvider = Static<typeof TrafficProvider>;

export const TrafficProviderWithToken = Type.Object(
  {
    ...providerFields,
    token: Type.String({
      description: 'The intake token (lgt_…). Shown only in this answer; rotate it to get a new one.',
    }),
    intake_url: Type.String({
      description:
        'Where the provider posts leads: <public base URL>/api/intake/leads when the hosting panel has a public base URL ' +
        "set, else the path /api/intake/leads (put your server's address before it).",
    }),
  },
  { title: 'TrafficProviderWithToken' },
);

export const CreateTrafficProvider = Type.Object(
  {
    name: ResourceName,
    status: Type.Optional({ ...ActiveStatus, default: 'active' }),
    allowed_ips: Type.Optional({ ...AllowedIps, default: [] }),
    duplicate_policy: Type.Optional({
      ...DuplicatePolicy,
      default: DEFAULT_DUPLICATE_POLICY,
      description: `Default: ${JSON.stringify(DEFAULT_DUPLICATE_POLICY)}`,
    }),
    velocity: Type.Optional({
      ...VelocityPolicy,
      default: DEFAULT_VELOCITY_POLICY,
      description: `Velocity flags (velocity_ip, velocity_phone, velocity_email_domain). Default: no limit, ${JSON.stringify(DEFAULT_VELOCITY_POLICY)}`,
    }),
    review: Type.Optional({ ...ReviewRuleInput, default: DEFAULT_REVIEW_RULE }),
    silent_after_hours: Type.Optional({
      ...Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 720 }), Type.Null()], {
        description: 'Alert (traffic_provider.silent) when no lead came for this many hours; null: never',
      }),
      default: null,
    }),
  },
  { additionalProperties: false },
);

export const UpdateTrafficProvider = Type.Object(
  {
    name: Type.Optional(ResourceName),
    status: Type.Optional(ActiveStatus),
    allowed_ips: Type.Optional({ ...AllowedIps, description: `${ALLOWED_IPS}. Replaces the list.` }),
    duplicate_policy: Type.Optional({ ...DuplicatePolicy, description: 'Replaces the whole policy' }),
    velocity: Type.Optional({ ...VelocityPolicy, description: 'Replaces the whole velocity policy' }),
    review: Type.Optional(ReviewRuleInput),
    silent_after_hours: Type.Optional(
      Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 720 }), Type.Null()], {
        description: 'Alert (traffic_provider.silent) when no lead came for this many hours; null: never',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TrafficProviderListQuery = Type.Object(
  { ...PageQuery, ...ResourceListQuery },
  { additionalProperties: false },
);
