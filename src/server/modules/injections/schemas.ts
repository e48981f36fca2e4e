import { Type } from 'typebox';
import { HHMM } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { LeadFilterQuery } from '../leads/schemas.js';

/** How many lead ids a job takes by list (a filter takes any number). */
export const MAX_LEAD_IDS = 10_000;

const Id = Type.String({ minLength: 1, maxLength: 100 });

const Filter = Type.Object(
  { ...LeadFilterQuery },
  {
    additionalProperties: false,
    description:
      'The leads chosen by the Leads filters: the query parameters of searchLeads (status, country, dates, campaign…), as JSON values',
  },
);

const LeadIds = Type.Array(Id, {
  minItems: 1,
  maxItems: MAX_LEAD_IDS,
  uniqueItems: true,
  description: `The leads chosen by id (up to ${MAX_LEAD_IDS}); ids that name no lead you may read are left out`,
});

export const Window = Type.Object(
  {
    time_zone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
    from: HHMM,
    to: HHMM,
  },
  {
    additionalProperties: false,
    title: 'InjectionWindow',
    description:
      'Leads are sent only from `from` to `to` (local time in time_zone, every day); to < from spans midnight',
  },
);

export const Selection = {
  filter: Type.Optional(Filter),
  lead_ids: Type.Optional(LeadIds),
};

export const PreviewBody = Type.Object(Selection, {
  additionalProperties: false,
  description: 'Exactly one of filter and lead_ids',
});

export const PreviewResult = Type.Object(
  { count: Type.Integer({ description: 'How many leads the job would be made of (0 when nothing matches)' }) },
  { title: 'InjectionPreview' },
);

export const CreateInjection = Type.Object(
  {
    ...Selection,
    flow_id: Type.Optional({ ...Id, description: 'Send the leads through this flow (not archived)' }),
    partner_ids: Type.Optional(
      Type.Array(Id, {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Or offer each lead to these partners (not archived), in this order, until one takes it',
      }),
    ),
    per_minute: Type.Integer({ format: 'int32', minimum: 1, maximum: 10_000, description: 'Leads sent per minute' }),
    start_at: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 40, description: 'Not before this instant (default: now)' }),
    ),
    window: Type.Optional(Window),
    reoffer: Type.Boolean({
      default: false,
      description: 'Also offer a lead to partners that were offered it before (default: never)',
    }),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of filter and lead_ids, and exactly one of flow_id and partner_ids',
  },
);

/** What the leads were chosen by: the filter as it was sent (with its defaults), or how many ids. */
const SelectionView = Type.Object(
  {
    ...Type.Partial(Type.Object({ ...LeadFilterQuery })).properties,
    lead_ids: Type.Optional(Type.Integer({ description: 'Chosen by id: how many ids were sent' })),
    import_id: Type.Optional(Type.String({ description: 'Made by a CSV import of mode route: its leads (getImport)' })),
  },
  { description: 'The filter the leads were chosen by, {"lead_ids": n}, or {"import_id": id}' },
);

const Count = (description: string) => Type.Integer({ description });

export const Injection = Type.Object(
  {
    id: Type.String(),
    state: Type.Unsafe<'scheduled' | 'running' | 'paused' | 'cancelled' | 'done'>({
      type: 'string',
      enum: ['scheduled', 'running', 'paused', 'cancelled', 'done'],
      description: 'scheduled: waiting for start_at; done: every lead sent or skipped',
    }),
    flow_id: Type.Union([Type.String(), Type.Null()]),
    partner_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
    per_minute: Type.Integer(),
    start_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    window: Type.Union([Window, Type.Null()]),
    reoffer: Type.Boolean(),
    selection: SelectionView,
    rule_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The recurring rule whose run made this job (/api/injection-rules), or null',
    }),
    total: Count('Leads in the job, chosen when it was created'),
    sent: Count('Leads sent to the engine so far (delivered + refused + in flight)'),
    delivered: Count('Sent and taken by a partner'),
    refused: Count('Sent and taken by no partner'),
    skipped: Count('Not sent: no longer rejected or failed, or the job was cancelled (see the report for why)'),
    left: Count('Not sent yet'),
    created_by: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'Injection' },
);

export const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
