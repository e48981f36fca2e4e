import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { checkUrl, originOf } from '../../distribution/integrations/destination-url.js';
import { maskHeaders, resolveSecretHeaders } from '../../distribution/integrations/secret-headers.js';
import { nestsDeeperThan } from '../../distribution/template.js';
import { conflict, HttpProblem, invalid, notFound, type FieldError } from '../../http/errors.js';
import { partnerInScope } from '../../db/record-scope.js';
import { UNSCOPED, type DataScope } from '../../db/scope.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { canSeeContacts } from '../leads/search.js';
import { maskRun } from './mask.js';
import { MAX_BODY_DEPTH, recordRun, runPull } from './pull.js';
import {
  deleteStatusPullRow,
  findPartner,
  findStatusPull,
  markPreviewed,
  saveStatusPull,
  type StatusPullRow,
} from './queries.js';
import type { StatusPullInput, StoredStatusPull } from './schemas.js';
import { configFromStore, configToStore } from './stored.js';

// A partner's status pull, as the routes use it: shown with its health (secret headers masked),
// set, removed, and run by hand.

/** The partner, or 404 when there is none or it is out of the reader's scope. */
const partner = async (db: DB, id: string, scope: DataScope) =>
  (partnerInScope(scope, id) ? await findPartner(db, id) : undefined) ?? notFound('partner');

const scopeOf = (actor: Actor) => actor.principal?.scope ?? UNSCOPED;

// No live change without a preview: a pull changes leads, and the first FTD reported wins, so a
// wrong mapping cannot be undone by the next run. The settings may run live (on schedule, or by
// hand with dry_run false) only once a dry run of exactly them was made, or while they already
// run on schedule. How often they run is not what they change, so interval_minutes is left out.

/** What a dry run previewed: the settings that decide what a run changes. */
function fingerprint(c: StoredStatusPull): string {
  const { enabled: _enabled, interval_minutes: _interval, ...what } = c;
  return createHash('sha256').update(JSON.stringify(what)).digest('base64url');
}

/** Whether the stored pull may run live now. */
function mayRunLive(row: StatusPullRow): boolean {
  const config = configFromStore(row.config);
  return config.enabled || row.previewed === fingerprint(config);
}

/** The stored pull as shown: secret header values masked, and its health. */
function shown(row: StatusPullRow) {
  const config = configFromStore(row.config);
  return {
    config: { ...config, request_headers: maskHeaders(config.request_headers) },
    health: {
      last_run_at: row.last_run_at,
      last_ok_at: row.last_ok_at,
      last_error: row.last_error,
      last_updated: Number(row.last_updated),
      consecutive_failures: Number(row.consecutive_failures),
      next_run_at: config.enabled ? row.next_run_at : null,
    },
    dry_run_seen: row.previewed === fingerprint(config),
  };
}

/** The partner's status pull as shown, or null when it has none (404 only for no such partner). */
export async function getStatusPull(db: DB, partnerId: string, scope: DataScope) {
  await partner(db, partnerId, scope);
  const pull = await findStatusPull(db, partnerId);
  return pull ? shown(pull) : null;
}

/**
 * The configuration to store, or 400 naming each bad field. A secret header sent back masked
 * keeps its stored value while the URL's origin is unchanged (resolveSecretHeaders).
 */
function storedConfig(b: StatusPullInput, before: StoredStatusPull | null, allowedNetworks: readonly string[]) {
  const errors: FieldError[] = [];
  checkUrl(b.url, allowedNetworks, errors, 'url');
  const origin = originOf(b.url);
  const headers = resolveSecretHeaders(
    b.request_headers ?? {},
    before?.request_headers ?? {},
    before !== null && origin !== null && origin === originOf(before.url),
    'request_headers',
    errors,
  );
  const method = b.method ?? 'GET';
  if (method === 'GET' && b.body_template) errors.push({ field: 'body_template', message: 'is sent with POST only' });
  // Before anything renders or stringifies it: both recurse, and thousands of levels overflow the stack.
  else if (b.body_template && nestsDeeperThan(b.body_template, MAX_BODY_DEPTH))
    errors.push({ field: 'body_template', message: `nests deeper than ${MAX_BODY_DEPTH} levels` });
  const words = new Set<string>();
  for (const word of Object.keys(b.status_map ?? {})) {
    const w = word.trim().toLowerCase();
    if (words.has(w))
      errors.push({
        field: `status_map.${word}`,
        message: 'is the same word as another (case and spaces around are ignored)',
      });
    words.add(w);
  }
  if (!b.status_path && !b.ftd_path)
    errors.push({ field: 'status_path', message: 'is needed, or ftd_path: the pull must read something' });
  if (errors.length) invalid(errors);
  const config: StoredStatusPull = {
    method,
    url: b.url,
    request_headers: headers,
    body_template: method === 'POST' ? (b.body_template ?? null) : null,
    date_format: b.date_format ?? 'iso',
    list_path: b.list_path ?? '',
    lead_id_path: b.lead_id_path,
    status_path: b.status_path ?? '',
    ftd_path: b.ftd_path ?? '',
    revenue_path: b.revenue_path ?? '',
    paging: b.paging ?? { type: 'none' },
    interval_minutes: b.interval_minutes,
    lookback_hours: b.lookback_hours,
    timeout_ms: b.timeout_ms ?? 10_000,
    status_map: b.status_map ?? {},
    enabled: b.enabled ?? before?.enabled ?? false,
  };
  return config;
}

/** Sets the partner's pull, due at once; audited with header names only. */
export async function putStatusPull(
  db: DB,
  actor: Actor,
  partnerId: string,
  b: StatusPullInput,
  allowedNetworks: readonly string[],
) {
  const p = await partner(db, partnerId, scopeOf(actor));
  const previous = await findStatusPull(db, p.id);
  const before = previous ? configFromStore(previous.config) : null;
  const config = storedConfig(b, before, allowedNetworks);
  if (config.enabled) {
    const seen = previous?.previewed === fingerprint(config);
    const running = before !== null && before.enabled && fingerprint(before) === fingerprint(config);
    if (!seen && !running)
      invalid([
        {
          field: 'enabled',
          message:
            'needs a dry run of these settings first: save them with enabled false, make a dry run (POST …/status-pull/run), then enable them',
        },
      ]);
  }
  const now = nowIso();
  await db.transaction().execute(async (tx) => {
    await saveStatusPull(tx, p.id, configToStore(config), now);
    const forAudit = (c: StoredStatusPull | null) => c && { ...c, request_headers: Object.keys(c.request_headers) };
    await audit(tx, actor, {
      action: 'partner.status_pull_updated',
      target_type: 'partner',
      target_id: p.id,
      details: { before: forAudit(before), after: forAudit(config) },
    });
  });
  return shown((await findStatusPull(db, p.id))!);
}

export async function deleteStatusPull(db: DB, actor: Actor, partnerId: string) {
  const p = await partner(db, partnerId, scopeOf(actor));
  await db.transaction().execute(async (tx) => {
    if (!(await deleteStatusPullRow(tx, p.id))) notFound('status pull for this partner');
    await audit(tx, actor, {
      action: 'partner.status_pull_deleted',
      target_type: 'partner',
      target_id: p.id,
      details: { name: p.name },
    });
  });
}

/**
 * Runs the pull now through `agent`. A dry run changes nothing; otherwise the run is recorded as
 * the scheduled one. The partner's text is masked unless the actor may see contacts.
 */
export async function runStatusPull(
  db: DB,
  actor: Actor,
  agent: Agent,
  log: FastifyBaseLogger,
  partnerId: string,
  dryRun: boolean,
) {
  const p = await partner(db, partnerId, scopeOf(actor));
  // A run reads (and changes) the partner's leads of every traffic provider.
  if (scopeOf(actor).trafficProviderIds !== null)
    throw new HttpProblem(
      403,
      'forbidden',
      "A status pull reads the partner's leads of every traffic provider; your role is limited to some traffic providers.",
    );
  const row = (await findStatusPull(db, p.id)) ?? notFound('status pull for this partner');
  const config = configFromStore(row.config);
  if (!dryRun && !mayRunLive(row))
    conflict(
      'Make a dry run of these settings first: a live pull changes leads, and the first FTD reported cannot be taken back.',
    );
  const { run, matched } = await runPull(db, agent, p, config, { dryRun });
  if (dryRun) await markPreviewed(db, p.id, fingerprint(config));
  else await recordRun(db, p, config, run, log);
  return canSeeContacts(principalOf(actor)) ? run : maskRun(run, matched);
}
