import { Type } from 'typebox';
import { PageQuery } from '../../http/pagination.js';

/** The lead fields a column can be mapped to: what intake takes (intake/schemas.ts IntakeLead). */
export const LEAD_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];
/** The fields intake requires: each must be mapped. */
export const REQUIRED_FIELDS: readonly LeadField[] = ['first_name', 'last_name', 'email', 'phone', 'country', 'ip'];

const Id = Type.String({ minLength: 1, maxLength: 100 });

export const Mapping = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 500 }), {
  title: 'ImportMapping',
  description:
    `Lead field → the CSV column it is read from: {"email": "E-Mail", …}. Fields: ${LEAD_FIELDS.join(', ')}; ` +
    `${REQUIRED_FIELDS.join(', ')} are required (as at intake)`,
});

export const UploadQuery = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200, description: 'The file name, as shown in the list' })) },
  { additionalProperties: false },
);

export const DryRunBody = Type.Object(
  {
    mapping: Mapping,
    traffic_provider_id: {
      ...Id,
      description: 'The traffic provider the leads come from (its duplicate policy applies)',
    },
    campaign_id: { ...Id, description: "One of the provider's campaigns (its countries apply)" },
  },
  { additionalProperties: false },
);

export const RunBody = Type.Object(
  {
    ...DryRunBody.properties,
    mode: Type.Union([Type.Literal('store'), Type.Literal('route')], {
      description:
        'store: the good rows are stored as leads (status new, sent nowhere); route: stored, then sent by one ' +
        're-injection job (flow_id or partner_ids, per_minute) created when the import is done',
    }),
    flow_id: Type.Optional({ ...Id, description: 'route: send the leads through this flow' }),
    partner_ids: Type.Optional(
      Type.Array(Id, { minItems: 1, maxItems: 50, uniqueItems: true, description: 'route: or to these partners' }),
    ),
    per_minute: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 1, maximum: 10_000, description: 'route: leads sent per minute' }),
    ),
  },
  { additionalProperties: false },
);

const Count = (description: string) => Type.Integer({ description });

const DryRunSummary = Type.Object(
  {
    rows: Count('Data rows checked'),
    good: Count('Rows that would be imported'),
    bad: Count('Rows refused by the intake rules (see errors)'),
    duplicates: Count('Rows that duplicate an existing lead or an earlier row of the file (see errors)'),
    finished_at: Type.String({ format: 'date-time' }),
  },
  { title: 'ImportDryRun' },
);

export const ImportView = Type.Object(
  {
    id: Type.String(),
    state: Type.Unsafe<string>({
      type: 'string',
      enum: ['uploaded', 'validating', 'validated', 'importing', 'done', 'cancelled', 'failed'],
      description:
        'uploaded: stored, nothing started; validating: a dry run is working; validated: the dry run is done ' +
        '(dry_run); importing; done; cancelled; failed (error says why)',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    bytes: Count('Size of the file'),
    rows: Count('Data rows (the header not counted; blank lines neither)'),
    columns: Type.Array(Type.String(), { description: "The header's column names" }),
    mapping: Type.Union([Mapping, Type.Null()], { description: 'The mapping of the last dry run or import' }),
    traffic_provider_id: Type.Union([Type.String(), Type.Null()]),
    campaign_id: Type.Union([Type.String(), Type.Null()]),
    mode: Type.Union([Type.Literal('store'), Type.Literal('route'), Type.Null()]),
    injection_id: Type.Union([Type.String(), Type.Null()], {
      description: 'mode route: the re-injection job sending the imported leads, once the import is done',
    }),
    progress: Type.Object({
      rows_done: Count('Rows worked by the running dry run or import'),
      rows: Count('Rows in the file'),
      percent: Type.Number({ description: '0–100' }),
    }),
    counts: Type.Object({
      good: Count('Rows passing every intake rule so far'),
      bad: Count('Rows refused so far'),
      duplicates: Count('Duplicate rows so far'),
      imported: Count('Leads stored by the import'),
    }),
    dry_run: Type.Union([DryRunSummary, Type.Null()], { description: 'The last finished dry run' }),
    error: Type.Union([Type.String(), Type.Null()]),
    created_by: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'Import' },
);

export const UploadedImport = Type.Object(
  {
    ...ImportView.properties,
    sample: Type.Array(Type.Array(Type.String()), {
      description: 'The first 5 rows (emails and phones masked without leads:contacts)',
    }),
    suggested_mapping: Mapping,
  },
  { title: 'UploadedImport' },
);

export const ImportError = Type.Object(
  {
    row: Type.Integer({ description: 'The data row: 1 is the first row after the header (blank lines not counted)' }),
    field: Type.String({ description: 'The lead field' }),
    column: Type.Union([Type.String(), Type.Null()], { description: 'The CSV column it was read from' }),
    reason: Type.String(),
    value: Type.Union([Type.String(), Type.Null()], {
      description: 'The cell as read (an email or phone masked without leads:contacts); null when empty',
    }),
  },
  { title: 'ImportError' },
);

export const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
