import { Type } from 'typebox';
import {
  ActiveStatus,
  Countries,
  CountryCode,
  NullableTimestamp,
  ResourceListQuery,
  ResourceName,
  Timestamp,
} from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { Amount, ByCountry, CURRENCY, PriceModelSchema } from '../../distribution/prices.js';

const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const Payout = Type.Object(
  {
    model: PriceModelSchema,
    amount: Type.Number({ description: `What the traffic provider is paid, in ${CURRENCY}` }),
    currency: Type.Literal(CURRENCY, { description: "The installation's currency" }),
    by_country: Type.Record(Type.String(), Type.Number(), {
      description: 'Prices for leads from these countries, replacing amount there',
    }),
  },
  { additionalProperties: false, title: 'Payout' },
);

export const PayoutInput = Type.Object(
  {
    model: PriceModelSchema,
    amount: Amount('What the traffic provider is paid (e.g. 12.5)'),
    currency: Type.Optional(
      Type.Literal(CURRENCY, { default: CURRENCY, description: "The installation's currency; only USD for now" }),
    ),
    by_country: Type.Optional({
      ...ByCountry(
        'Prices per lead country, replacing amount there, e.g. {"DE": 15}; recorded on each lead when it is paid for',
      ),
      default: {},
    }),
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
const FlowRef = Type.Union([Ref('A flow that is not archived'), Type.Null()], {
  description: 'null: leads are stored but not routed',
});

export const CreateCampaign = Type.Object(
  {
    name: ResourceName,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { default: 'active' })),
    traffic_provider_id: ProviderRef,
    flow_id: Type.Optional(
      Type.Union([Ref('A flow that is not archived'), Type.Null()], {
        default: null,
        description: 'null: leads are stored but not routed',
      }),
    ),
    countries: Type.Optional(
      Type.Array(CountryCode, {
        uniqueItems: true,
        maxItems: 250,
        default: [],
        description: 'ISO 3166-1 alpha-2; empty: every country',
      }),
    ),
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
