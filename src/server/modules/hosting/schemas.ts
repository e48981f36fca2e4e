import { Type } from 'typebox';
import { Timestamp } from '../../http/common-schemas.js';
import { BACKUP_NAME_PATTERN } from './backups.js';
import { Page } from '../../http/pagination.js';

const Bytes = Type.Integer({ minimum: 0 });

export const PublicBaseUrl = Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], {
  description:
    'The address operators and partners reach this server at, as scheme://host[:port] with no path ' +
    "(e.g. https://leads.example.com). When set, links the API hands out (a partner's postback_url) are absolute " +
    'URLs under it; null: they stay paths (/api/…) for the caller to put after its own address.',
});

export const HostingStatus = Type.Object(
  {
    version: Type.String({ description: 'Leadgate version (package.json)' }),
    build: Type.Union([Type.String(), Type.Null()], {
      description: 'Git commit of the build (LEADGATE_BUILD_COMMIT), null when not given',
    }),
    started_at: Timestamp,
    uptime_seconds: Type.Integer({ minimum: 0 }),
    node_version: Type.String(),
    platform: Type.String({ description: 'Operating system, kernel release and CPU architecture' }),
    memory: Type.Object(
      { rss_bytes: Bytes, heap_used_bytes: Bytes, heap_total_bytes: Bytes },
      { description: 'This server process' },
    ),
    load_average: Type.Array(Type.Number(), {
      minItems: 3,
      maxItems: 3,
      description: '1, 5 and 15 minutes (zeros on Windows)',
    }),
    cpu_count: Type.Integer({ minimum: 1 }),
    disk: Type.Object(
      { path: Type.String({ description: 'DATA_DIR' }), free_bytes: Bytes, total_bytes: Bytes },
      { description: 'The file system holding the data folder (free: what this process may use)' },
    ),
    database: Type.Object({
      engine: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
      size_bytes: { ...Bytes, description: 'SQLite: database file plus write-ahead log; PostgreSQL: pg_database_size' },
      migration_level: Type.Union([Type.String(), Type.Null()], { description: 'The newest migration applied' }),
      latest_migration: Type.String({ description: 'The newest migration this version knows' }),
    }),
    public_base_url: PublicBaseUrl,
    mail: Type.Object(
      {
        configured: Type.Boolean({ description: 'Whether invitations are mailed (SMTP_URL and MAIL_FROM are set)' }),
        relay: Type.Union([Type.String(), Type.Null()], {
          description: 'The mail server, without its credentials (e.g. smtp://mail.example.com:587)',
        }),
        security: Type.Union([Type.Literal('tls'), Type.Literal('starttls'), Type.Literal('none'), Type.Null()], {
          description: 'tls: implicit TLS (smtps://); starttls: STARTTLS required; none: plain text (?starttls=off)',
        }),
        from: Type.Union([Type.String(), Type.Null()], { description: 'MAIL_FROM' }),
      },
      { description: 'The mail server invitations go through (SMTP_URL, MAIL_FROM; the password is never shown)' },
    ),
    backups: Type.Object({
      supported: Type.Boolean({ description: 'true on SQLite; on PostgreSQL Leadgate does not make backups' }),
      advice: Type.String({
        description:
          'Where backups go (SQLite), or how to back up (PostgreSQL: pg_dump); and that the secret key must be kept with them',
      }),
    }),
    secret_key: Type.Object(
      {
        source: Type.Union([Type.Literal('file'), Type.Literal('environment')], {
          description: 'file: the key file beside the data (made on first start); environment: LEADGATE_SECRET_KEY',
        }),
        file: Type.Union([Type.String(), Type.Null()], {
          description: 'The key file (null: the key is in the environment)',
        }),
        key_id: Type.Union([Type.String(), Type.Null()], {
          description: 'The id of the key that seals (the first 12 hex digits of its SHA-256); never the key',
        }),
      },
      { description: 'What seals stored secrets (partner header values, webhook secrets, signing keys) at rest' },
    ),
  },
  { title: 'HostingStatus' },
);

export const PublicUrlBody = Type.Object(
  { public_base_url: PublicBaseUrl },
  { additionalProperties: false, title: 'PublicUrlSettings' },
);

export const Backup = Type.Object(
  {
    name: Type.String({ pattern: BACKUP_NAME_PATTERN }),
    size_bytes: Bytes,
    created_at: Timestamp,
  },
  { title: 'Backup' },
);

export const BackupPage = Page(Backup, 'BackupPage');

export const BackupParams = Type.Object({
  name: Type.String({
    pattern: BACKUP_NAME_PATTERN,
    maxLength: 64,
    description: 'leadgate-<YYYYMMDDTHHMMSSmmm>Z.sqlite',
  }),
});
