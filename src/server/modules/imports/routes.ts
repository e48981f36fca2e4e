import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { DryRunBody, ImportError, ImportView, ListQuery, RunBody, UploadedImport, UploadQuery } from './schemas.js';
import {
  cancelImport,
  getImport,
  importErrors,
  importErrorsCsv,
  listImportsFor,
  startImport,
  uploadImport,
} from './service.js';

const TAGS = ['Imports'];
const ACCESS = { permission: 'leads:edit' } as const;
const SCOPE = 'A role limited to some traffic providers imports only to its providers and sees only its own imports.';
const ROWS = 'Row numbers count data rows: 1 is the first row after the header (blank lines are not counted).';

export default async function importRoutes(app: App) {
  // The CSV reaches the use case as the request's stream: it is read (and stored in chunks) as it arrives.
  app.addContentTypeParser('text/csv', (_req, payload, done) => done(null, payload));

  app.post(
    '/api/imports',
    {
      config: ACCESS,
      schema: {
        operationId: 'uploadImport',
        tags: TAGS,
        summary: 'Upload a CSV file of leads to import',
        description:
          'Send the file as the body with `Content-Type: text/csv` (UTF-8, RFC 4180; `,` or `;` as found in the header ' +
          'row; a BOM is allowed). It is stored in chunks for the dry run and the import, and deleted when the import is ' +
          'done or cancelled, or 24 hours after an upload that was never started. Answers the header, the first rows and ' +
          'a suggested mapping (the one last used for the same header, else guessed from the column names). A file ' +
          `larger than IMPORT_MAX_BYTES gets 413; one that is not CSV (not UTF-8, NUL bytes, no header, an empty or ` +
          'repeated column name, an unterminated quote, a row with more cells than the header) gets 400 naming the row; ' +
          `nothing is kept of either. Audited (import.uploaded). ${ROWS} ${SCOPE}`,
        querystring: UploadQuery,
        consumes: ['text/csv'],
        body: Type.Unsafe<unknown>({ description: 'The CSV file' }),
        response: { 201: UploadedImport, ...problems(413, 415) },
      },
    },
    async (req, reply) => {
      const declared = Number(req.headers['content-length']);
      const body = await uploadImport(app.db, actorOf(req), req.body, {
        name: req.query.name,
        maxBytes: app.config.importMaxBytes,
        chunkChars: app.config.importChunkBytes,
        declaredBytes: Number.isFinite(declared) ? declared : undefined,
      });
      return reply.code(201).send(body);
    },
  );

  app.get(
    '/api/imports',
    {
      config: ACCESS,
      schema: {
        operationId: 'listImports',
        tags: TAGS,
        summary: 'CSV imports, newest first, with their progress',
        querystring: ListQuery,
        response: { 200: Page(ImportView, 'ImportPage') },
      },
    },
    async (req) => listImportsFor(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/imports/:id',
    {
      config: ACCESS,
      schema: {
        operationId: 'getImport',
        tags: TAGS,
        summary: 'One CSV import: its state, progress, counts and last dry run',
        params: IdParams,
        response: { 200: ImportView, ...problems(404) },
      },
    },
    async (req) => getImport(app.db, actorOf(req), req.params.id),
  );

  const START =
    'Every bad field is named at once: a mapping entry that is no lead field or names no column, a required lead ' +
    'field not mapped, a traffic provider or campaign unknown, archived, out of your scope or not belonging together. ' +
    'The mapping is saved for the next file with the same header. 409 naming the state unless the import is uploaded ' +
    `or validated. ${SCOPE}`;

  app.post(
    '/api/imports/:id/dry-run',
    {
      config: ACCESS,
      schema: {
        operationId: 'dryRunImport',
        tags: TAGS,
        summary: 'Check every row of an upload by the intake rules, storing nothing',
        description:
          "Worked in the background (state validating, then validated with dry_run's counts). Each row is checked as " +
          "intake checks a lead (required fields, email, country code, phone for the country, IP, the campaign's " +
          "countries), against the blocklists (global and the provider's; the row names the entry) and against the " +
          "traffic provider's duplicate policy, both existing leads and earlier rows of the " +
          `file; every bad row is listed by getImportErrors. Audited (import.dry_run). ${START} ${ROWS}`,
        params: IdParams,
        body: DryRunBody,
        response: { 202: ImportView, ...problems(404, 409) },
      },
    },
    async (req, reply) =>
      reply.code(202).send(await startImport(app.db, actorOf(req), req.params.id, 'dry_run', req.body)),
  );

  app.post(
    '/api/imports/:id/run',
    {
      config: ACCESS,
      schema: {
        operationId: 'runImport',
        tags: TAGS,
        summary: 'Import the good rows of an upload as leads of a traffic provider and campaign',
        description:
          'Worked in the background, a chunk at a time: each chunk’s leads and bad rows are committed together, so a ' +
          'row is either stored or reported, never both, never twice. The rules are the dry run’s. An imported lead has ' +
          "status new (stored, sent nowhere), its import's id (getLead: import_id) and no lead.received event (the " +
          'import is audited instead: import.started). Mode route: when the import is done, one re-injection job ' +
          `(injection_id) sends its leads to flow_id or partner_ids at per_minute. ${START}`,
        params: IdParams,
        body: RunBody,
        response: { 202: ImportView, ...problems(404, 409) },
      },
    },
    async (req, reply) =>
      reply.code(202).send(await startImport(app.db, actorOf(req), req.params.id, 'import', req.body)),
  );

  app.post(
    '/api/imports/:id/cancel',
    {
      config: ACCESS,
      schema: {
        operationId: 'cancelImport',
        tags: TAGS,
        summary: 'Cancel an import',
        description:
          'The dry run or import stops after the chunk in hand (the rows imported so far stay); the file is deleted. ' +
          '409 naming the state when the import is done, cancelled or failed. Audited (import.cancelled).',
        params: IdParams,
        response: { 200: ImportView, ...problems(404, 409) },
      },
    },
    async (req) => cancelImport(app.db, actorOf(req), req.params.id),
  );

  app.get(
    '/api/imports/:id/errors',
    {
      config: ACCESS,
      schema: {
        operationId: 'getImportErrors',
        tags: TAGS,
        summary: 'The bad rows of the last dry run or import, in row order',
        description: `One entry per bad field of a row (duplicates too). ${ROWS}`,
        params: IdParams,
        querystring: ListQuery,
        response: { 200: Page(ImportError, 'ImportErrorPage'), ...problems(404) },
      },
    },
    async (req) => importErrors(app.db, actorOf(req), req.params.id, req.query),
  );

  app.get(
    '/api/imports/:id/errors.csv',
    {
      config: ACCESS,
      schema: {
        operationId: 'getImportErrorsCsv',
        tags: TAGS,
        summary: 'Download the bad rows as CSV',
        description: `Columns row, field, column, reason, value (contacts masked without leads:contacts). ${ROWS}`,
        params: IdParams,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: {
              'text/csv': { schema: Type.String({ description: 'CSV: a header row, then one row per error' }) },
            },
          },
          ...problems(404),
        },
      },
    },
    async (req, reply) => {
      const { fileName, lines } = await importErrorsCsv(app.db, actorOf(req), req.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${fileName}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(lines) as unknown as string); // streamed: the schema's type is the file's text
    },
  );
}
