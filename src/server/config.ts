import net from 'node:net';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import { parseCidr } from './auth/ip-allowlist.js';
import { BUILT_IN_PUBLIC_KEY, parsePublicKey } from './licence-key.js';
import type { DatabaseConfig } from './db/database.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  database: DatabaseConfig;
  admin: { email: string; password: string } | null;
  /** LEADGATE_SECRET_KEY: the keys that seal stored secrets (the first seals), or null: the key file beside the data (secrets/keys.ts). */
  secretKeys: Buffer[] | null;
  /** Proxies whose X-Forwarded-For is believed (IPs or CIDRs); empty = use the socket address. */
  trustProxy: string[];
  sessionIdleMinutes: number;
  logLevel: string;
  bodyLimitBytes: number;
  /** How long POST /api/intake/leads waits for the waterfall before answering `pending`. */
  intakeWaitMs: number;
  /** How often pending leads whose owner died are looked for (0: never; tests). */
  recoveryIntervalMs: number;
  /** How often each process looks for events to send (webhooks, postbacks); 0: never (tests dispatch by hand). */
  dispatchIntervalMs: number;
  /** How often due status pulls are looked for (default 15 s where events are sent, else 0: never). */
  statusPullIntervalMs: number;
  /** How often quiet traffic providers are looked for (default 5 min where events are sent, else 0). */
  providerSilenceIntervalMs: number;
  /** How often the review queue is looked at for leads waiting too long (0: never here). */
  reviewAlertIntervalMs: number;
  retentionIntervalMs: number;
  /** How often the reports' folds are made: partner performance's hours, the leads report's days (default 1 min where events are sent, else 0). */
  reportFoldIntervalMs: number;
  injectionIntervalMs: number;
  injectionRuleIntervalMs: number;
  /** How often CSV imports are worked (modules/imports/worker.ts), a chunk at a time. */
  importIntervalMs: number;
  /** The largest CSV file an import takes (413 above it). */
  importMaxBytes: number;
  /** About how much of an upload one stored chunk holds (cut at row boundaries): the unit of an import's work. */
  importChunkBytes: number;
  /** How often events past their retention are deleted (default hourly where events are sent, else 0). */
  eventPurgeIntervalMs: number;
  /** How often traffic providers' due log facts are chained (default 2 s where events are sent, else 0: never). */
  providerLogIntervalMs: number;
  /** How often Idempotency-Keys past 24 hours are deleted (default hourly; 0: never). */
  idempotencyPurgeIntervalMs: number;
  /** SQLite: how often the background checkpointer copies the WAL into the file (0: SQLite's backstop only). */
  sqliteCheckpointIntervalMs: number;
  /** Verifies licence keys: LICENCE_PUBLIC_KEY, else the key built into the release. */
  licencePublicKey: KeyObject;
  /** The git commit this build was made from (LEADGATE_BUILD_COMMIT, set by whoever builds), or null. */
  buildCommit: string | null;
  /** CIDRs that outbound calls may reach although they are private/loopback/link-local (default none). */
  partnerAllowedNetworks: string[];
  /** A dashboard session ends this long after sign-in, however active (SESSION_MAX_HOURS). */
  sessionMaxHours: number;
  /** API requests per minute per API key or session (0: no limit). */
  rateLimitPerKey: number;
  /** API requests per minute per client address (0: no limit). */
  rateLimitPerIp: number;
  /** Lead exports that may run at once on this server instance (EXPORT_CONCURRENCY). */
  exportConcurrency: number;
  /** The Bearer token GET /metrics takes (METRICS_TOKEN); null: /metrics answers 404. */
  metricsToken: string | null;
  /** A request (headers and body) must have arrived within this long, else 408 and the connection closes (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Its headers within this long (HEADERS_TIMEOUT_MS; at most REQUEST_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long (KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
  /** Open connections this instance accepts at once; more are closed at once (MAX_CONNECTIONS). */
  maxConnections: number;
  /** Where invitations are mailed from (SMTP_URL, MAIL_FROM); null: nothing is mailed. */
  mail: MailSettings | null;
}

/** An SMTP relay (SMTP_URL) and the sender (MAIL_FROM). The password never leaves this object except to the relay. */
export interface MailSettings {
  /** Host name or IP address (IPv6 without brackets). */
  host: string;
  port: number;
  /** tls: implicit TLS (smtps://); starttls: STARTTLS required; none: plain text (?starttls=off, no credentials). */
  security: 'tls' | 'starttls' | 'none';
  username: string | null;
  password: string | null;
  from: { name: string | null; address: string };
  /** The relay without its credentials, for logs and the Hosting page: smtp://host:587. */
  display: string;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export const MIN_PASSWORD_LENGTH = 10;
export const MIN_METRICS_TOKEN_LENGTH = 16;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return fallback;
  }
  return Number(raw);
}

/** Reads the environment into a typed config; every bad value is reported at once, by name. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];

  const host = env.HOST || '127.0.0.1';
  if (net.isIP(host) === 0 && !/^[a-zA-Z0-9.-]+$/.test(host)) {
    problems.push(`HOST must be an IP address or a host name (got "${host}")`);
  }
  const port = integer(env, 'PORT', 3000, 0, 65535, problems);
  const dataDir = path.resolve(env.DATA_DIR || './data');

  let database: DatabaseConfig = { engine: 'sqlite', file: path.join(dataDir, 'leadgate.db') };
  const url = env.DATABASE_URL;
  if (url) {
    if (/^postgres(ql)?:\/\//.test(url)) {
      try {
        new URL(url);
        database = { engine: 'postgres', url };
      } catch {
        problems.push('DATABASE_URL is not a valid postgres:// URL');
      }
    } else if (url.startsWith('sqlite:')) {
      const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
      if (!file) problems.push('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/leadgate.db');
      else database = { engine: 'sqlite', file: path.resolve(file) };
    } else {
      problems.push(
        'DATABASE_URL must start with postgres://, postgresql:// or sqlite: (unset = SQLite under DATA_DIR)',
      );
    }
  }

  let admin: Config['admin'] = null;
  const email = env.LEADGATE_ADMIN_EMAIL;
  const password = env.LEADGATE_ADMIN_PASSWORD;
  if (email || password) {
    if (!email || !password) {
      problems.push('LEADGATE_ADMIN_EMAIL and LEADGATE_ADMIN_PASSWORD must be set together');
    } else {
      if (!EMAIL_RE.test(email)) problems.push(`LEADGATE_ADMIN_EMAIL is not an email address (got "${email}")`);
      if (password.length < MIN_PASSWORD_LENGTH) {
        problems.push(`LEADGATE_ADMIN_PASSWORD must be at least ${MIN_PASSWORD_LENGTH} characters`);
      }
      admin = { email: email.trim().toLowerCase(), password };
    }
  }

  const secretKeys = secretKeysOf(env.LEADGATE_SECRET_KEY, problems);

  const trustProxy: string[] = [];
  for (const entry of (env.TRUST_PROXY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const cidr = parseCidr(entry);
    if (!cidr) problems.push(`TRUST_PROXY entry "${entry}" is not an IP address or CIDR`);
    else trustProxy.push(cidr);
  }

  const sessionIdleMinutes = integer(env, 'SESSION_IDLE_MINUTES', 720, 5, 60 * 24 * 90, problems);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const bodyLimitBytes = integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024, problems);

  const intakeWaitMs = integer(env, 'INTAKE_WAIT_MS', 25_000, 0, 600_000, problems);
  const recoveryIntervalMs = integer(env, 'DELIVERY_RECOVERY_INTERVAL_MS', 5_000, 0, 3_600_000, problems);
  const dispatchIntervalMs = integer(env, 'EVENT_DISPATCH_INTERVAL_MS', 1_000, 0, 3_600_000, problems);
  // The jobs that went with dispatch before they had settings of their own default to off with it.
  const withDispatch = (ms: number) => (dispatchIntervalMs > 0 ? ms : 0);
  const DAY = 86_400_000;
  const statusPullIntervalMs = integer(env, 'STATUS_PULL_INTERVAL_MS', withDispatch(15_000), 0, DAY, problems);
  const providerSilenceIntervalMs = integer(
    env,
    'PROVIDER_SILENCE_INTERVAL_MS',
    withDispatch(300_000),
    0,
    DAY,
    problems,
  );
  const reviewAlertIntervalMs = integer(env, 'REVIEW_ALERT_INTERVAL_MS', withDispatch(60_000), 0, DAY, problems);
  const retentionIntervalMs = integer(env, 'RETENTION_INTERVAL_MS', 600_000, 0, DAY, problems);
  const reportFoldIntervalMs = integer(env, 'REPORT_FOLD_INTERVAL_MS', withDispatch(60_000), 0, DAY, problems);
  const injectionIntervalMs = integer(env, 'INJECTION_INTERVAL_MS', withDispatch(1_000), 0, 60_000, problems);
  const injectionRuleIntervalMs = integer(
    env,
    'INJECTION_RULE_INTERVAL_MS',
    withDispatch(15_000),
    0,
    3_600_000,
    problems,
  );
  const importIntervalMs = integer(env, 'IMPORT_INTERVAL_MS', withDispatch(1_000), 0, 60_000, problems);
  const importMaxBytes = integer(env, 'IMPORT_MAX_BYTES', 256 * 1024 * 1024, 1024, 2 ** 31 - 1, problems);
  const importChunkBytes = integer(env, 'IMPORT_CHUNK_BYTES', 4 * 1024, 1, 64 * 1024 * 1024, problems);
  const eventPurgeIntervalMs = integer(env, 'EVENT_PURGE_INTERVAL_MS', withDispatch(3_600_000), 0, DAY, problems);
  const providerLogIntervalMs = integer(env, 'PROVIDER_LOG_INTERVAL_MS', withDispatch(2_000), 0, DAY, problems);
  const idempotencyPurgeIntervalMs = integer(env, 'IDEMPOTENCY_PURGE_INTERVAL_MS', 3_600_000, 0, DAY, problems);
  const sqliteCheckpointIntervalMs = integer(env, 'SQLITE_CHECKPOINT_INTERVAL_MS', 250, 0, 60_000, problems);

  let licencePublicKey = parsePublicKey(BUILT_IN_PUBLIC_KEY);
  if (env.LICENCE_PUBLIC_KEY) {
    try {
      licencePublicKey = parsePublicKey(env.LICENCE_PUBLIC_KEY);
    } catch (err) {
      problems.push(
        `LICENCE_PUBLIC_KEY must be an Ed25519 public key, as PEM or base64 SPKI (${(err as Error).message})`,
      );
    }
  }

  const buildCommit = env.LEADGATE_BUILD_COMMIT?.trim().toLowerCase() || null;
  if (buildCommit && !/^[0-9a-f]{7,40}$/.test(buildCommit))
    problems.push(`LEADGATE_BUILD_COMMIT must be a git commit hash, 7 to 40 hex digits (got "${buildCommit}")`);

  const partnerAllowedNetworks: string[] = [];
  for (const entry of (env.PARTNER_ALLOWED_NETWORKS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const cidr = parseCidr(entry);
    if (!cidr) problems.push(`PARTNER_ALLOWED_NETWORKS entry "${entry}" is not an IP address or CIDR`);
    else partnerAllowedNetworks.push(cidr);
  }
  const sessionMaxHours = integer(env, 'SESSION_MAX_HOURS', 168, 1, 24 * 365, problems);
  const rateLimitPerKey = integer(env, 'RATE_LIMIT_PER_KEY', 1200, 0, 1_000_000, problems);
  const rateLimitPerIp = integer(env, 'RATE_LIMIT_PER_IP', 2400, 0, 1_000_000, problems);
  const exportConcurrency = integer(env, 'EXPORT_CONCURRENCY', 2, 1, 64, problems);

  const metricsToken = env.METRICS_TOKEN || null;
  if (
    metricsToken !== null &&
    (metricsToken.length < MIN_METRICS_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(metricsToken))
  ) {
    problems.push(
      `METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} printable characters without spaces (got ${metricsToken.length}); make one with: openssl rand -hex 32`,
    );
  }

  // A client sending its request a byte at a time must not hold a connection (and its memory)
  // for ever: none of these can be 0 ("no limit"). Behind a proxy, keep KEEP_ALIVE_TIMEOUT_MS
  // above the proxy's idle timeout (the default 72 s is above the usual 60 s), so the proxy hangs up first.
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000, problems);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 30_000, 100, 3_600_000, problems);
  if (headersTimeoutMs > requestTimeoutMs)
    problems.push(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be more than REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request`,
    );
  const keepAliveTimeoutMs = integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000, problems);
  const maxConnections = integer(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000, problems);

  const mail = mailSettings(env, problems);

  if (problems.length) throw new ConfigError(problems);
  return {
    host,
    port,
    dataDir,
    database,
    admin,
    secretKeys,
    trustProxy,
    sessionIdleMinutes,
    logLevel,
    bodyLimitBytes,
    intakeWaitMs,
    recoveryIntervalMs,
    dispatchIntervalMs,
    statusPullIntervalMs,
    providerSilenceIntervalMs,
    reviewAlertIntervalMs,
    retentionIntervalMs,
    reportFoldIntervalMs,
    injectionIntervalMs,
    injectionRuleIntervalMs,
    importIntervalMs,
    importMaxBytes,
    importChunkBytes,
    eventPurgeIntervalMs,
    providerLogIntervalMs,
    idempotencyPurgeIntervalMs,
    sqliteCheckpointIntervalMs,
    licencePublicKey,
    buildCommit,
    partnerAllowedNetworks,
    sessionMaxHours,
    rateLimitPerKey,
    rateLimitPerIp,
    exportConcurrency,
    metricsToken,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs,
    maxConnections,
    mail,
  };
}

// An address that goes into MAIL FROM and a header as is: ASCII atext, one @, a dotted domain.
const PLAIN_ADDRESS_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$/;

/** MAIL_FROM: "noreply@example.com" or "Leadgate <noreply@example.com>". */
function parseMailFrom(raw: string): MailSettings['from'] | null {
  const m = /^\s*(?:(.*?)\s*<([^<>]*)>|([^<>]*))\s*$/.exec(raw);
  if (!m || /[\x00-\x1f\x7f]/.test(raw)) return null;
  const address = (m[2] ?? m[3]).trim();
  if (!PLAIN_ADDRESS_RE.test(address)) return null;
  const name = (m[1] ?? '').replace(/^"(.*)"$/, '$1').trim();
  return { name: name || null, address };
}

const SMTP_URL_EXAMPLE = 'smtp://user:password@mail.example.com:587 or smtps://user:password@mail.example.com:465';

/** SMTP_URL and MAIL_FROM; the URL is never echoed in a problem (it may hold a password). */
function mailSettings(env: NodeJS.ProcessEnv, problems: string[]): MailSettings | null {
  const raw = env.SMTP_URL?.trim();
  const fromRaw = env.MAIL_FROM?.trim();
  if (!raw) {
    if (fromRaw) problems.push('MAIL_FROM is set but SMTP_URL is not: set SMTP_URL too, or unset MAIL_FROM');
    return null;
  }
  const start = problems.length;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`SMTP_URL is not a URL (not echoed: it may hold a password); expected ${SMTP_URL_EXAMPLE}`);
  }
  if (url) {
    const tls = url.protocol === 'smtps:';
    if (!tls && url.protocol !== 'smtp:') {
      problems.push(`SMTP_URL must start with smtp:// or smtps:// (${SMTP_URL_EXAMPLE})`);
      return null;
    }
    if (!url.hostname) problems.push('SMTP_URL has no host');
    if (url.pathname && url.pathname !== '/') problems.push('SMTP_URL must not have a path');
    if (url.hash) problems.push('SMTP_URL must not have a fragment');
    const starttls = url.searchParams.get('starttls');
    for (const key of url.searchParams.keys())
      if (key !== 'starttls') problems.push(`SMTP_URL takes no "${key}" parameter (only ?starttls=off on smtp://)`);
    if (starttls !== null && (tls || starttls !== 'off'))
      problems.push(
        'SMTP_URL: ?starttls=off is the only starttls setting, and only on smtp:// (smtps:// is TLS from the start)',
      );
    if ((url.username === '') !== (url.password === ''))
      problems.push('SMTP_URL needs both a user name and a password, or neither');
    if (!tls && starttls === 'off' && url.username)
      problems.push('SMTP_URL with ?starttls=off would send the password unencrypted: use STARTTLS or smtps://');
    const from = fromRaw ? parseMailFrom(fromRaw) : null;
    if (!fromRaw) problems.push('MAIL_FROM is required when SMTP_URL is set (e.g. "Leadgate <noreply@example.com>")');
    else if (!from)
      problems.push(
        `MAIL_FROM must be an address or "Name <address>", in ASCII (got "${fromRaw.replace(/[\x00-\x1f]/g, ' ')}")`,
      );
    if (problems.length > start || !from) return null;
    const port = url.port ? Number(url.port) : tls ? 465 : 587;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return {
      host,
      port,
      security: tls ? 'tls' : starttls === 'off' ? 'none' : 'starttls',
      username: url.username ? decodeURIComponent(url.username) : null,
      password: url.password ? decodeURIComponent(url.password) : null,
      from,
      display: `${tls ? 'smtps' : 'smtp'}://${url.port ? url.host : `${url.host}:${port}`}`,
    };
  }
  return null;
}

/** LEADGATE_SECRET_KEY: base64 keys of 32 bytes, comma-separated, the first the one that seals. Never echoed. */
function secretKeysOf(value: string | undefined, problems: string[]): Buffer[] | null {
  if (value === undefined || value.trim() === '') return null;
  const keys = value.split(',').map((s) => s.trim());
  const bad = keys.findIndex((k) => Buffer.from(k, /[-_]/.test(k) ? 'base64url' : 'base64').length !== 32);
  if (bad >= 0) {
    problems.push(
      `LEADGATE_SECRET_KEY: key ${bad + 1} is not 32 bytes of base64 (make one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))")`,
    );
    return null;
  }
  return keys.map((k) => Buffer.from(k, /[-_]/.test(k) ? 'base64url' : 'base64'));
}
