import { createHash } from 'node:crypto';
import { Compile } from 'typebox/compile';
import type { FieldError } from '../../http/errors.js';
import { IntakeLead } from '../intake/schemas.js';
import { readIntake, type NormalizedLead } from '../intake/validate.js';
import { LEAD_FIELDS, REQUIRED_FIELDS, type LeadField } from './schemas.js';

// A row's rules are intake's: the intake schema (required fields, lengths) and readIntake
// (email, country code, phone per country, IP), then the campaign's countries; duplicates are
// the worker's (they need the database). Mappings: checked, guessed from header names, and the
// key they are saved under (a hash of the header's normalized names).

export type Mapping = Partial<Record<LeadField, string>>;

export interface RowError {
  row: number;
  field: string;
  column_name: string | null;
  reason: string;
  value: string | null;
}

const intakeLead = Compile(IntakeLead);

const normalized = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The key a header's mapping is saved under: the same set of names, in any order or case. */
export const headerHash = (columns: string[]) =>
  createHash('sha256')
    .update(JSON.stringify([...new Set(columns.map(normalized))].sort()))
    .digest('hex');

const GUESSES: Record<LeadField, string[]> = {
  first_name: ['firstname', 'first', 'fname', 'givenname', 'vorname', 'prenom'],
  last_name: ['lastname', 'last', 'lname', 'surname', 'familyname', 'nachname', 'nom'],
  email: ['email', 'mail', 'emailaddress', 'emailadresse'],
  phone: ['phone', 'phonenumber', 'telephone', 'tel', 'mobile', 'cell', 'telefon', 'msisdn'],
  country: ['country', 'countrycode', 'iso', 'land', 'pays'],
  ip: ['ip', 'ipaddress', 'ipaddr', 'userip'],
  language: ['language', 'lang', 'sprache', 'locale'],
  funnel: ['funnel', 'landing', 'landingpage', 'offer'],
  sub_id1: ['subid1', 'sub1', 'affsub1', 'affsub'],
  sub_id2: ['subid2', 'sub2', 'affsub2'],
  sub_id3: ['subid3', 'sub3', 'affsub3'],
  sub_id4: ['subid4', 'sub4', 'affsub4'],
  sub_id5: ['subid5', 'sub5', 'affsub5'],
};

/** A mapping guessed from the header's names (each column used once). */
export function guessMapping(columns: string[]): Mapping {
  const out: Mapping = {};
  const used = new Set<string>();
  for (const field of LEAD_FIELDS) {
    const column = columns.find((c) => !used.has(c) && GUESSES[field].includes(normalized(c)));
    if (column !== undefined) {
      out[field] = column;
      used.add(column);
    }
  }
  return out;
}

/** Every bad entry of a mapping, named `mapping.<field>`. */
export function mappingErrors(mapping: Record<string, string>, columns: string[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const [field, column] of Object.entries(mapping)) {
    if (!(LEAD_FIELDS as readonly string[]).includes(field))
      errors.push({ field: `mapping.${field}`, message: `is not a lead field (one of ${LEAD_FIELDS.join(', ')})` });
    else if (!columns.includes(column))
      errors.push({ field: `mapping.${field}`, message: `"${column}" names no column of the file` });
  }
  for (const field of REQUIRED_FIELDS)
    if (mapping[field] === undefined)
      errors.push({ field: `mapping.${field}`, message: 'is required: map it to a column (intake requires it)' });
  return errors;
}

/** Column index per mapped field. */
export const indexesOf = (mapping: Mapping, columns: string[]) =>
  Object.entries(mapping).map(([field, column]) => [field as LeadField, columns.indexOf(column!)] as const);

const schemaMessage = (field: string, keyword: string, message: string) =>
  field === 'country' && keyword === 'pattern' ? 'must be a two-letter ISO 3166-1 code, e.g. DE' : message;

/** One row checked by intake's rules: the normalized lead, or every bad field. */
export function checkRow(
  cells: string[],
  row: number,
  mapping: Mapping,
  indexes: ReturnType<typeof indexesOf>,
  countries: string[],
): { lead: NormalizedLead } | { errors: RowError[] } {
  const body: Record<string, string> = {};
  for (const [field, i] of indexes) {
    const v = cells[i] ?? '';
    if (v.trim() !== '') body[field] = v;
  }
  const errors = new Map<string, string>();
  for (const e of intakeLead.Errors(body)) {
    if (e.keyword === 'required') {
      for (const f of (e.params as { requiredProperties: string[] }).requiredProperties)
        if (!errors.has(f)) errors.set(f, 'is required: the cell is empty');
    } else {
      const f = e.instancePath.slice(1);
      if (!errors.has(f)) errors.set(f, schemaMessage(f, e.keyword, e.message));
    }
  }
  // Intake's own checks on the fields the schema let through.
  const rest = Object.fromEntries(Object.entries(body).filter(([f]) => !errors.has(f)));
  const read = readIntake(rest, undefined, undefined);
  if ('errors' in read) for (const e of read.errors) if (!errors.has(e.field)) errors.set(e.field, e.message);
  if (!errors.size && 'input' in read) {
    const lead = read.input.lead;
    if (countries.length && !countries.includes(lead.country))
      errors.set('country', `campaign does not accept ${lead.country} leads`);
    else return { lead };
  }
  return {
    errors: [...errors].map(([field, reason]) => ({
      row,
      field,
      column_name: mapping[field as LeadField] ?? null,
      reason,
      value: body[field] ?? null,
    })),
  };
}
