import fs from 'node:fs';
import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import { PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { backupDir } from './backups.js';
import { Backup, BackupPage, BackupParams, HostingStatus, PublicUrlBody } from './schemas.js';
import { createBackup, deleteBackup, findBackup, listBackupPage, updatePublicUrl } from './service.js';
import { hostingStatus } from './status.js';

const tags = ['Hosting'];

// A backup is the whole database: every lead unmasked, partner credentials, password hashes and
// two-factor secrets. hosting:view / hosting:edit open the panel; the backups in it are for the
// built-in admin role only (API-CONTRACT rule 17), and always from a session (sessionOnly).
const ADMIN_ONLY =
  'Admins only because a backup holds the whole database (every lead unmasked, partner credentials, two-factor secrets).';

export default async function hostingRoutes(app: App) {
  const dataDir = app.config.dataDir;
  const cfg = app.config.database;

  app.get(
    '/api/hosting',
    {
      config: { sessionOnly: true, permission: 'hosting:view' },
      schema: {
        operationId: 'getHosting',
        tags,
        summary: 'Server, storage and version facts, the public base URL and backup support',
        response: { 200: HostingStatus },
      },
    },
    async () => hostingStatus(app, backupDir(dataDir)),
  );

  app.put(
    '/api/hosting/public-url',
    {
      config: { sessionOnly: true, permission: 'hosting:edit' },
      schema: {
        operationId: 'updatePublicUrl',
        tags,
        summary: 'Set or clear the public base URL',
        description:
          'Stored as an origin (scheme, host, port). A path, query, fragment or credentials in it is refused with 400.',
        body: PublicUrlBody,
        response: { 200: PublicUrlBody },
      },
    },
    async (req) => updatePublicUrl(app.db, actorOf(req), req.body.public_base_url),
  );

  app.get(
    '/api/hosting/backups',
    {
      config: { sessionOnly: true, permission: 'hosting:view', adminOnly: true },
      schema: {
        operationId: 'listBackups',
        tags,
        summary: 'The SQLite backups on this server, newest first',
        description: ADMIN_ONLY,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: BackupPage, ...problems(409) },
      },
    },
    async (req) => listBackupPage(cfg, dataDir, req.query),
  );

  app.post(
    '/api/hosting/backups',
    {
      config: { sessionOnly: true, permission: 'hosting:edit', adminOnly: true },
      schema: {
        operationId: 'createBackup',
        tags,
        summary: 'Back up the SQLite database now',
        description:
          'A consistent copy of the whole database at one instant (VACUUM INTO on a read-only connection, off the ' +
          'event loop), made while intake goes on. One at a time: 409 while another is being made. PostgreSQL: 409 with how to back up.\n\n' +
          ADMIN_ONLY,
        response: { 201: Backup, ...problems(409) },
      },
    },
    async (req, reply) => reply.status(201).send(await createBackup(app.db, actorOf(req), cfg, dataDir)),
  );

  app.get(
    '/api/hosting/backups/:name',
    {
      config: { sessionOnly: true, permission: 'hosting:view', adminOnly: true },
      schema: {
        operationId: 'downloadBackup',
        tags,
        summary: 'Download one backup',
        description: `The SQLite database file, as an attachment. Anyone holding it holds every lead: keep it safe.\n\n${ADMIN_ONLY}`,
        params: BackupParams,
        response: {
          200: {
            description: 'The SQLite database file',
            content: { 'application/vnd.sqlite3': { schema: Type.String({ description: 'SQLite 3 database file' }) } },
          },
          ...problems(404, 409),
        },
      },
    },
    async (req, reply) => {
      const { file, size } = await findBackup(cfg, dataDir, req.params.name);
      return (
        reply
          .type('application/vnd.sqlite3')
          .header('content-length', size)
          .header('content-disposition', `attachment; filename="${req.params.name}"`)
          .header('cache-control', 'no-store')
          // The schema types the body as the file; a stream of it is what goes out.
          .send(fs.createReadStream(file) as unknown as string)
      );
    },
  );

  app.delete(
    '/api/hosting/backups/:name',
    {
      config: { sessionOnly: true, permission: 'hosting:edit', adminOnly: true },
      schema: {
        operationId: 'deleteBackup',
        tags,
        summary: 'Delete one backup',
        description: ADMIN_ONLY,
        params: BackupParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      await deleteBackup(app.db, actorOf(req), cfg, dataDir, req.params.name);
      return reply.status(204).send(null);
    },
  );
}
