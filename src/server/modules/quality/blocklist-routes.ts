import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import {
  BlocklistEntry,
  BlocklistImportQuery,
  BlocklistImportResult,
  BlocklistQuery,
  CreateBlocklistEntry,
  UpdateBlocklistEntry,
} from './blocklist-schemas.js';
import {
  IMPORT_MAX_ROWS,
  addEntry,
  getEntry,
  importEntries,
  listEntries,
  removeEntry,
  updateEntry,
} from './blocklist-service.js';

const tags = ['Blocklists'];
const VIEW = { permission: 'quality:view' } as const;
const EDIT = { permission: 'quality:edit' } as const;
/** The largest CSV a bulk add reads. */
const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
const SCOPE =
  'A role limited to some traffic providers sees and edits only entries for its providers (not the global ones).';
const MATCH =
  'Intake refuses a lead that an unexpired entry matches (global, or its traffic provider’s) with status rejected; ' +
  'the provider is told only that the lead did not pass the quality checks, the operator’s reason names the entry.';

export default async function blocklistRoutes(app: App) {
  // The bulk add's CSV reaches the use case as the request's stream.
  app.addContentTypeParser('text/csv', (_req, payload, done) => done(null, payload));

  app.get(
    '/api/blocklists',
    {
      config: VIEW,
      schema: {
        operationId: 'listBlocklistEntries',
        tags,
        summary: 'Blocklist entries, newest first',
        description: `Expired entries are left out unless include_expired=true. ${SCOPE}`,
        querystring: BlocklistQuery,
        response: { 200: Page(BlocklistEntry, 'BlocklistEntryPage') },
      },
    },
    async (req) => listEntries(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/blocklists/:id',
    {
      config: VIEW,
      schema: {
        operationId: 'getBlocklistEntry',
        tags,
        summary: 'One blocklist entry',
        params: IdParams,
        response: { 200: BlocklistEntry, ...problems(404) },
      },
    },
    async (req) => getEntry(app.db, actorOf(req), req.params.id),
  );

  app.post(
    '/api/blocklists',
    {
      config: EDIT,
      schema: {
        operationId: 'createBlocklistEntry',
        tags,
        summary: 'Block a value',
        description:
          'The value is normalized per kind (emails NFKC and lower case, their domain compared in ASCII; phones need ' +
          'their country code; an IP block must be a network: 203.0.113.0/24, not 203.0.113.7/24); a bad one gets 400 ' +
          `naming what is wrong. The same value already listed in the same scope answers 409 naming its entry. ${MATCH} ` +
          `Audited (blocklist.added; emails and phones masked). ${SCOPE}`,
        body: CreateBlocklistEntry,
        response: { 201: BlocklistEntry, ...problems(409) },
      },
    },
    async (req, reply) => reply.status(201).send(await addEntry(app.db, actorOf(req), req.body)),
  );

  app.post(
    '/api/blocklists/import',
    {
      config: EDIT,
      schema: {
        operationId: 'importBlocklistEntries',
        tags,
        summary: 'Block many values from a CSV file',
        description:
          'Send the file as the body with `Content-Type: text/csv` (UTF-8, `,` or `;`): a header row with a `value` ' +
          'column and optionally `kind`, `traffic_provider_id`, `expires_at` (a date, midnight UTC, or a date-time with ' +
          'its zone) and `note`; the query gives the kind, provider and expiry of rows that name none. All or nothing: ' +
          'any bad row answers 400 naming it ("row 3 value"; 1 is the first row after the header; the first 100 are ' +
          `named) and nothing is added. Values already listed in the same scope are left as they are and counted. At ` +
          `most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES / 1024 / 1024} MiB (else 400 / 413). Audited ` +
          `(blocklist.imported). ${SCOPE}`,
        querystring: BlocklistImportQuery,
        consumes: ['text/csv'],
        body: Type.Unsafe<unknown>({ description: 'The CSV file' }),
        response: { 200: BlocklistImportResult, ...problems(413, 415) },
      },
    },
    async (req) => importEntries(app.db, actorOf(req), req.body, req.query, IMPORT_MAX_BYTES),
  );

  app.patch(
    '/api/blocklists/:id',
    {
      config: EDIT,
      schema: {
        operationId: 'updateBlocklistEntry',
        tags,
        summary: 'Change an entry’s expiry or note',
        description:
          'The value, kind and scope of an entry are what it is: to change them, remove it and add another. ' +
          'Audited (blocklist.updated).',
        params: IdParams,
        body: UpdateBlocklistEntry,
        response: { 200: BlocklistEntry, ...problems(404) },
      },
    },
    async (req) => updateEntry(app.db, actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/api/blocklists/:id',
    {
      config: EDIT,
      schema: {
        operationId: 'deleteBlocklistEntry',
        tags,
        summary: 'Remove an entry',
        description: 'Leads it refused stay rejected. Audited (blocklist.removed).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...problems(404) },
      },
    },
    async (req, reply) => {
      await removeEntry(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
