import { Type } from 'typebox';
import { ActiveStatus, Countries, CountryCode, NullableTimestamp, ResourceListQuery, ResourceName, Timestamp } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const CURRENCY = 'USD';
/** Cents must fit a 32-bit integer column on PostgreSQL with room to spare. */
export const MAX_PAYOUT = 1_000_000;

const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });
const PayoutModel = Type.Union([Type.Literal('cpl'), Type.Literal('cpa')], { description: 'cpl: paid per lead; cpa: paid per FTD (first deposit)' });

export const Payout = Type.Object(
  {
    model: PayoutModel,
    amount: Type.Number({ minimum: 0, maximum: MAX_PAYOUT, description: `What the traffic provider is paid, in ${CURRENCY}; at most 2 decimals` }),
    currency: Type.Literal(CURRENCY, { description: 'The installation\'s currency' }),
  },
  { additionalProperties: false, title: 'Payout' },
);

export const PayoutInput = Type.Object(
  {
    model: PayoutModel,
    amount: Type.Number({ minimum: 0, maximum: MAX_PAYOUT, description: `In ${CURRENCY}, at most 2 decimals (e.g. 12.5)` }),
    currency: Type.Optional(Type.Literal(CURRENCY, { default: CURRENCY, description: 'The installation\'s currency; only USD for now' })),
  },
  { additionalProperties: false, title: 'PayoutInput' },
);

export const Campaign = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: ActiveStatus,
    traffic_provider_id: Type.String(),
    traffic_provider_name: Type.String(),
    flow_id: Type.Union([Type.String(), Type.Null()]),
    flow_name: Type.Union([Type.String(), Type.Null()]),
    countries: Type.Array(Type.String(), { description: 'Empty: every country' }),
    payout: Payout,
    created_at: Timestamp,
    updated_at: Timestamp,
    archived_at: NullableTimestamp,
  },
  { title: 'Campaign' },
);

const ProviderRef = Ref('A traffic provider that is not archived');
const FlowRef = Type.Union([Ref('A flow that is not archived'), Type.Null()], { description: 'null: leads are stored but not routed' });

export const CreateCampaign = Type.Object(
  {
    name: ResourceName,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { default: 'active' })),
    traffic_provider_id: ProviderRef,
    flow_id: Type.Optional(Type.Union([Ref('A flow that is not archived'), Type.Null()], { default: null, description: 'null: leads are stored but not routed' })),
    countries: Type.Optional(Type.Array(CountryCode, { uniqueItems: true, maxItems: 250, default: [], description: 'ISO 3166-1 alpha-2; empty: every country' })),
    payout: PayoutInput,
  },
  { additionalProperties: false },
);

// No defaults on a PATCH: an omitted field keeps its value.
export const UpdateCampaign = Type.Object(
  {
    name: Type.Optional(ResourceName),
    status: Type.Optional(ActiveStatus),
    traffic_provider_id: Type.Optional(ProviderRef),
    flow_id: Type.Optional(FlowRef),
    countries: Type.Optional(Countries),
    payout: Type.Optional(PayoutInput),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const CampaignListQuery = Type.Object(
  {
    ...PageQuery,
    ...ResourceListQuery,
    traffic_provider_id: Type.Optional(Ref('Only campaigns of this traffic provider')),
    flow_id: Type.Optional(Ref('Only campaigns routed through this flow')),
  },
  { additionalProperties: false },
);
