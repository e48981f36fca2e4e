import { assertMayAdd } from '../roles/scope.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { displayPrefix, issueToken } from '../../auth/credentials.js';
import { archiveOrDelete } from '../../db/archive.js';
import { newId, nowIso } from '../../db/ids.js';
import { partnerInScope } from '../../db/record-scope.js';
import { UNSCOPED, type DataScope } from '../../db/scope.js';
import type { Database } from '../../db/tables.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import {
  integrationForAudit,
  integrationToStore,
  resolveIntegration,
  shownIntegration,
} from '../../distribution/integrations/index.js';
import { parsePrice, shownDeal, storedDeal } from '../../distribution/prices.js';
import { DEFAULT_QUALITY_RULE, shownQualityRule, storedQualityRule } from '../../distribution/quality-rule.js';
import { audit, type Actor } from '../audit/service.js';
import { forgetTracking } from '../autologin/tracking.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import { capSlots, readUsage, usedOf, type CapWindow } from '../../distribution/caps.js';
import { dayKey, localDay, startOfLocalDay } from '../../time.js';
import {
  attemptCounts,
  healthPartners,
  lastAttempt,
  findPartner,
  insertPartner,
  liveFlowsUsing,
  partnerPage,
  partnerReferenced,
  patchPartner,
  storedIntegration,
  type PartnerFilter,
  type PartnerRecord,
} from './queries.js';
import { FAILING_AFTER, type CreatePartner, type Partner, type PartnerHealth, type UpdatePartner } from './schemas.js';
import { checkPartnerRules } from './checks.js';

const ARCHIVED = 'This partner is archived (deleted while leads refer to it) and cannot be changed.';

/** Absolute under the hosting panel's public base URL when one is set, else a path. */
const postbackUrl = async (db: Kysely<Database>, token: string) =>
  publicLink(await readPublicBaseUrl(db), `/api/postback/${token}`);

/** The API form of a row: the integration's secrets masked, no token. */
export function toPartner(row: PartnerRecord): Partner {
  const integration = storedIntegration(row);
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    countries: JSON.parse(row.countries),
    working_hours: row.working_hours ? JSON.parse(row.working_hours) : null,
    daily_cap: row.daily_cap === null ? null : Number(row.daily_cap),
    hourly_cap: row.hourly_cap === null ? null : Number(row.hourly_cap),
    total_cap: row.total_cap === null ? null : Number(row.total_cap),
    deal: row.deal === null ? null : shownDeal(parsePrice(row.deal)!),
    pause_after_failures: row.pause_after_failures === null ? null : Number(row.pause_after_failures),
    consecutive_failures: Number(row.consecutive_failures),
    integration: shownIntegration(integration),
    track_autologin: Number(row.track_autologin) === 1,
    autologin_single_use: Number(row.autologin_single_use) === 1,
    quality: shownQualityRule(row.quality_rule),
    postback_token_prefix: displayPrefix('lgp_', row.postback_token_id),
    created_at: row.created_at,
    updated_at: row.updated_at,
    archived_at: row.archived_at,
  };
}

export async function listPartners(db: Kysely<Database>, filter: PartnerFilter, scope: DataScope) {
  const page = await partnerPage(db, filter, scope);
  return { ...page, data: page.data.map(toPartner) };
}

/** The partner, or undefined when there is none or it is out of the reader's scope (404 alike). */
export const findPartnerInScope = async (db: Kysely<Database>, id: string, scope: DataScope) =>
  partnerInScope(scope, id) ? findPartner(db, id) : undefined;

const scopeOf = (actor: Actor) => actor.principal?.scope ?? UNSCOPED;

export const getPartner = async (db: Kysely<Database>, id: string, scope: DataScope) =>
  toPartner((await findPartnerInScope(db, id, scope)) ?? notFound('partner'));

/** A new partner with its postback token and URL, shown this once. `allowedNetworks`: PARTNER_ALLOWED_NETWORKS. */
export async function createPartner(
  db: Kysely<Database>,
  actor: Actor,
  b: Static<typeof CreatePartner>,
  allowedNetworks: readonly string[],
) {
  assertMayAdd(scopeOf(actor), 'partner');
  const errors: FieldError[] = [];
  const working_hours = b.working_hours ?? null;
  const daily_cap = b.daily_cap ?? null;
  const hourly_cap = b.hourly_cap ?? null;
  const total_cap = b.total_cap ?? null;
  checkPartnerRules({ working_hours, daily_cap, hourly_cap, total_cap, deal: b.deal }, errors);
  const integration = resolveIntegration(b.integration, null, errors, allowedNetworks);
  if (errors.length) invalid(errors);
  const token = issueToken('lgp_');
  const now = nowIso();
  const row = {
    id: newId(),
    name: b.name.trim(),
    status: b.status ?? 'active',
    countries: JSON.stringify(b.countries ?? []),
    working_hours: working_hours ? JSON.stringify(working_hours) : null,
    daily_cap,
    hourly_cap,
    total_cap,
    deal: b.deal ? JSON.stringify(storedDeal(b.deal)) : null,
    pause_after_failures: b.pause_after_failures ?? null,
    consecutive_failures: 0,
    integration: integrationToStore(integration),
    track_autologin: b.track_autologin ? 1 : 0,
    autologin_single_use: b.autologin_single_use ? 1 : 0,
    quality_rule: storedQualityRule(b.quality ?? DEFAULT_QUALITY_RULE),
    postback_token_id: token.id,
    created_at: now,
    updated_at: now,
    archived_at: null,
  };
  await db.transaction().execute(async (tx) => {
    await insertPartner(tx, { ...row, postback_token_hash: token.secretHash });
    await audit(tx, actor, {
      action: 'partner.created',
      target_type: 'partner',
      target_id: row.id,
      details: {
        name: row.name,
        status: row.status,
        integration: integrationForAudit(integration),
        quality: shownQualityRule(row.quality_rule),
      },
    });
  });
  forgetTracking(db);
  return { ...toPartner(row), postback_token: token.token, postback_url: await postbackUrl(db, token.token) };
}

export async function updatePartner(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  b: Static<typeof UpdatePartner>,
  allowedNetworks: readonly string[],
) {
  const saved = await db.transaction().execute(async (tx) => {
    const current = (await findPartnerInScope(tx, id, scopeOf(actor))) ?? notFound('partner');
    if (current.archived_at) conflict(ARCHIVED);
    const errors: FieldError[] = [];
    const merged = {
      working_hours:
        b.working_hours !== undefined
          ? b.working_hours
          : current.working_hours
            ? JSON.parse(current.working_hours)
            : null,
      daily_cap: b.daily_cap !== undefined ? b.daily_cap : current.daily_cap,
      hourly_cap: b.hourly_cap !== undefined ? b.hourly_cap : current.hourly_cap,
      total_cap: b.total_cap !== undefined ? b.total_cap : current.total_cap,
    };
    checkPartnerRules({ ...merged, deal: b.deal }, errors);
    const integration = b.integration
      ? resolveIntegration(b.integration, storedIntegration(current), errors, allowedNetworks)
      : undefined;
    if (errors.length) invalid(errors);
    const patch = {
      ...(b.name !== undefined ? { name: b.name.trim() } : {}),
      ...(b.status !== undefined ? { status: b.status } : {}),
      ...(b.countries !== undefined ? { countries: JSON.stringify(b.countries) } : {}),
      ...(b.working_hours !== undefined
        ? { working_hours: b.working_hours ? JSON.stringify(b.working_hours) : null }
        : {}),
      ...(b.daily_cap !== undefined ? { daily_cap: b.daily_cap } : {}),
      ...(b.hourly_cap !== undefined ? { hourly_cap: b.hourly_cap } : {}),
      ...(b.total_cap !== undefined ? { total_cap: b.total_cap } : {}),
      ...(b.deal !== undefined ? { deal: b.deal ? JSON.stringify(storedDeal(b.deal)) : null } : {}),
      ...(b.pause_after_failures !== undefined ? { pause_after_failures: b.pause_after_failures } : {}),
      // Turned on again by an operator: the count starts over.
      ...(b.status === 'active' && current.status !== 'active' ? { consecutive_failures: 0 } : {}),
      ...(integration ? { integration: integrationToStore(integration) } : {}),
      ...(b.track_autologin !== undefined ? { track_autologin: b.track_autologin ? 1 : 0 } : {}),
      ...(b.autologin_single_use !== undefined ? { autologin_single_use: b.autologin_single_use ? 1 : 0 } : {}),
      ...(b.quality !== undefined ? { quality_rule: storedQualityRule(b.quality) } : {}),
      updated_at: nowIso(),
    };
    await patchPartner(tx, current.id, patch);
    const { integration: _secret, ...plain } = b;
    await audit(tx, actor, {
      action: 'partner.updated',
      target_type: 'partner',
      target_id: current.id,
      details: {
        name: current.name,
        changes: {
          ...plain,
          ...(integration ? { integration: integrationForAudit(integration) } : {}),
          ...(patch.quality_rule !== undefined ? { quality: shownQualityRule(patch.quality_rule) } : {}),
        },
      },
    });
    return toPartner({ ...current, ...patch });
  });
  forgetTracking(db); // track_autologin may have changed (modules/autologin/tracking.ts)
  return saved;
}

/** A new postback token, shown this once with its URL; the old one stops working. */
export async function rotatePartnerPostbackToken(db: Kysely<Database>, actor: Actor, id: string) {
  const token = issueToken('lgp_');
  const url = await postbackUrl(db, token.token); // before the transaction: SQLite has one connection
  return db.transaction().execute(async (tx) => {
    const current = (await findPartnerInScope(tx, id, scopeOf(actor))) ?? notFound('partner');
    if (current.archived_at) conflict(ARCHIVED);
    const patch = { postback_token_id: token.id, updated_at: nowIso() };
    await patchPartner(tx, current.id, { ...patch, postback_token_hash: token.secretHash });
    await audit(tx, actor, {
      action: 'partner.postback_token_rotated',
      target_type: 'partner',
      target_id: current.id,
      details: { name: current.name },
    });
    return { ...toPartner({ ...current, ...patch }), postback_token: token.token, postback_url: url };
  });
}

/**
 * Refused (409) while a flow that is not archived routes to it; archived while leads, attempts
 * or archived flows refer to it (an archived one stays as it is); else deleted.
 */
export async function deletePartner(db: Kysely<Database>, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    const done =
      (await archiveOrDelete(tx, 'partners', id, {
        find: () => findPartnerInScope(tx, id, scopeOf(actor)),
        refuse: async (current) => {
          const flows = await liveFlowsUsing(tx, current.id);
          if (flows.length)
            conflict(`Flows still route to this partner: ${flows.join(', ')}. Remove it from them first.`);
        },
        referenced: (current) => partnerReferenced(tx, current.id),
      })) ?? notFound('partner');
    if (done.outcome === 'unchanged') return;
    await audit(tx, actor, {
      action: done.outcome === 'archived' ? 'partner.archived' : 'partner.deleted',
      target_type: 'partner',
      target_id: done.row.id,
      details: { name: done.row.name },
    });
  });
}

const HEALTH_ORDER: PartnerHealth['health'][] = ['failing', 'capped', 'paused', 'ok'];

/**
 * Every partner's health (not archived), failing first: its status, its failed calls in a row,
 * its calls today (its own day, as its daily cap counts) by outcome, its own caps' fill and its
 * latest call. Reads the partner rows, the cap counters by key and one index range of today's
 * calls per partner: never all attempts.
 */
export async function partnerHealth(db: Kysely<Database>, now: number, scope: DataScope) {
  const partners = (await healthPartners(db, scope)).map((p) => {
    const working_hours = p.working_hours ? JSON.parse(p.working_hours) : null;
    return { ...p, working_hours, slots: capSlots({ partner: { ...p, working_hours }, target: null }, now, '') };
  });
  const usage = await readUsage(
    db,
    partners.flatMap((p) => p.slots),
  );
  const data: PartnerHealth[] = [];
  for (const p of partners) {
    const tz = p.working_hours ? (p.working_hours.timezone as string) : 'UTC';
    const day = localDay(tz, now);
    const today = { day: dayKey(day), calls: 0, delivered: 0, refused: 0, failed: 0 };
    for (const r of await attemptCounts(db, p.id, new Date(startOfLocalDay(tz, day)).toISOString())) {
      const n = Number(r.n);
      today.calls += n;
      if (r.outcome === 'accepted') today.delivered += n;
      else if (r.outcome === 'rejected' && Number(r.server_error) === 0) today.refused += n;
      else if (r.outcome !== 'in_flight') today.failed += n;
    }
    const slots = p.slots;
    const fill = (w: CapWindow) => {
      const s = slots.find((x) => x.window === w);
      return s ? { used: usedOf(s, usage), cap: s.cap } : null;
    };
    const caps = { day: fill('day'), hour: fill('hour'), total: fill('total') };
    const failures = Number(p.consecutive_failures);
    const full = Object.values(caps).some((c) => c !== null && c.used >= c.cap);
    const last = await lastAttempt(db, p.id);
    data.push({
      id: p.id,
      name: p.name,
      status: p.status,
      health: p.status === 'paused' ? 'paused' : failures >= FAILING_AFTER ? 'failing' : full ? 'capped' : 'ok',
      consecutive_failures: failures,
      today,
      caps,
      last_call: last ? { at: last.requested_at, outcome: last.outcome, http_status: last.http_status } : null,
    });
  }
  data.sort((a, b) => HEALTH_ORDER.indexOf(a.health) - HEALTH_ORDER.indexOf(b.health)); // stable: by name within
  return { at: new Date(now).toISOString(), failing_after: FAILING_AFTER, data };
}
