import { assertMayAdd } from '../roles/scope.js';
import { providerInScope } from '../../db/record-scope.js';
import { UNSCOPED, type DataScope } from '../../db/scope.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import { parseCidr } from '../../auth/ip-allowlist.js';
import { archiveOrDelete } from '../../db/archive.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import {
  findTrafficProvider,
  insertTrafficProvider,
  liveCampaignsUsing,
  patchTrafficProvider,
  providerReferenced,
  toTrafficProvider,
  trafficProviderPage,
} from './queries.js';
import { DEFAULT_DUPLICATE_POLICY, type CreateTrafficProvider, type UpdateTrafficProvider } from './schemas.js';
import { DEFAULT_VELOCITY_POLICY } from '../quality/velocity.js';
import { storedReviewRule } from '../quality/review-rule.js';

const ARCHIVED =
  'This traffic provider is archived (deleted while leads or campaigns refer to it) and cannot be changed.';

const intakeUrl = async (db: Kysely<Database>) => publicLink(await readPublicBaseUrl(db), '/api/intake/leads');

/** The allow-list check on a body that may not have passed its schema (route config moreChecks). */
export function allowedIpErrors(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const list = (body as { allowed_ips?: unknown } | null)?.allowed_ips;
  if (Array.isArray(list)) {
    list.forEach((entry, i) => {
      if (typeof entry === 'string' && !parseCidr(entry))
        errors.push({ field: `allowed_ips[${i}]`, message: `"${entry}" is not an IP address or CIDR` });
    });
  }
  return errors;
}

/** Canonical, de-duplicated CIDRs; one error per entry that is not an address or CIDR. */
export function normaliseAllowedIps(entries: string[], errors: FieldError[]): string[] {
  const out: string[] = [];
  entries.forEach((entry, i) => {
    const cidr = parseCidr(entry);
    if (!cidr) errors.push({ field: `allowed_ips[${i}]`, message: `"${entry}" is not an IP address or CIDR` });
    else if (!out.includes(cidr)) out.push(cidr);
  });
  return out;
}

export const listTrafficProviders = (
  db: Kysely<Database>,
  filter: Parameters<typeof trafficProviderPage>[1],
  scope: DataScope,
) => trafficProviderPage(db, filter, scope);

/** The provider, or undefined when there is none or it is out of the reader's scope (404 alike). */
const findInScope = async (db: Kysely<Database>, id: string, scope: DataScope) =>
  providerInScope(scope, id) ? findTrafficProvider(db, id) : undefined;

const scopeOf = (actor: Actor) => actor.principal?.scope ?? UNSCOPED;

export const getTrafficProvider = async (db: Kysely<Database>, id: string, scope: DataScope) =>
  toTrafficProvider((await findInScope(db, id, scope)) ?? notFound('traffic provider'));

/** A new provider with its intake token, shown this once. */
export async function createTrafficProvider(
  db: Kysely<Database>,
  actor: Actor,
  b: Static<typeof CreateTrafficProvider>,
) {
  assertMayAdd(scopeOf(actor), 'traffic provider');
  const errors: FieldError[] = [];
  const allowed_ips = normaliseAllowedIps(b.allowed_ips ?? [], errors);
  if (errors.length) invalid(errors);
  const token = issueToken('lgt_');
  const now = nowIso();
  const row = {
    id: newId(),
    name: b.name.trim(),
    status: b.status ?? 'active',
    token_id: token.id,
    allowed_ips: JSON.stringify(allowed_ips),
    duplicate_policy: JSON.stringify(b.duplicate_policy ?? DEFAULT_DUPLICATE_POLICY),
    velocity_policy: JSON.stringify(b.velocity ?? DEFAULT_VELOCITY_POLICY),
    review_rule: storedReviewRule(b.review ?? {}),
    silent_after_hours: b.silent_after_hours ?? null,
    created_at: now,
    updated_at: now,
    archived_at: null,
  };
  await db.transaction().execute(async (tx) => {
    await insertTrafficProvider(tx, { ...row, token_hash: token.secretHash });
    await audit(tx, actor, {
      action: 'traffic_provider.created',
      target_type: 'traffic_provider',
      target_id: row.id,
      details: {
        name: row.name,
        status: row.status,
        allowed_ips,
        duplicate_policy: JSON.parse(row.duplicate_policy),
        velocity: JSON.parse(row.velocity_policy),
        review: JSON.parse(row.review_rule),
      },
    });
  });
  return { ...toTrafficProvider(row), token: token.token, intake_url: await intakeUrl(db) };
}

export async function updateTrafficProvider(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  b: Static<typeof UpdateTrafficProvider>,
) {
  const errors: FieldError[] = [];
  const allowed_ips = b.allowed_ips ? normaliseAllowedIps(b.allowed_ips, errors) : undefined;
  if (errors.length) invalid(errors);
  return db.transaction().execute(async (tx) => {
    const current = (await findInScope(tx, id, scopeOf(actor))) ?? notFound('traffic provider');
    if (current.archived_at) conflict(ARCHIVED);
    const patch = {
      ...(b.name !== undefined ? { name: b.name.trim() } : {}),
      ...(b.status !== undefined ? { status: b.status } : {}),
      ...(allowed_ips ? { allowed_ips: JSON.stringify(allowed_ips) } : {}),
      ...(b.duplicate_policy ? { duplicate_policy: JSON.stringify(b.duplicate_policy) } : {}),
      ...(b.velocity ? { velocity_policy: JSON.stringify(b.velocity) } : {}),
      ...(b.review ? { review_rule: storedReviewRule(b.review) } : {}),
      ...(b.silent_after_hours !== undefined ? { silent_after_hours: b.silent_after_hours } : {}),
      updated_at: nowIso(),
    };
    await patchTrafficProvider(tx, current.id, patch);
    await audit(tx, actor, {
      action: 'traffic_provider.updated',
      target_type: 'traffic_provider',
      target_id: current.id,
      details: { name: current.name, changes: { ...b, ...(allowed_ips ? { allowed_ips } : {}) } },
    });
    return toTrafficProvider({ ...current, ...patch });
  });
}

/** A new intake token, shown this once; the old one stops working. `action`: who asked (an operator, or the portal). */
export async function rotateTrafficProviderToken(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  action: 'traffic_provider.token_rotated' | 'portal.token_rotated' = 'traffic_provider.token_rotated',
) {
  const token = issueToken('lgt_');
  const intake_url = await intakeUrl(db); // before the transaction: SQLite has one connection
  return db.transaction().execute(async (tx) => {
    const current = (await findInScope(tx, id, scopeOf(actor))) ?? notFound('traffic provider');
    if (current.archived_at) conflict(ARCHIVED);
    const patch = { token_id: token.id, updated_at: nowIso() };
    await patchTrafficProvider(tx, current.id, { ...patch, token_hash: token.secretHash });
    await audit(tx, actor, {
      action,
      target_type: 'traffic_provider',
      target_id: current.id,
      details: { name: current.name },
    });
    return { ...toTrafficProvider({ ...current, ...patch }), token: token.token, intake_url };
  });
}

/**
 * Refused (409) while a campaign that is not archived uses it; archived while leads or archived
 * campaigns refer to it (an archived one stays as it is); else deleted.
 */
export async function deleteTrafficProvider(db: Kysely<Database>, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    const done =
      (await archiveOrDelete(tx, 'traffic_providers', id, {
        find: () => findInScope(tx, id, scopeOf(actor)),
        refuse: async (current) => {
          const campaigns = await liveCampaignsUsing(tx, current.id);
          if (campaigns.length)
            conflict(
              `Campaigns still use this traffic provider: ${campaigns.join(', ')}. Archive them or move them to another provider first.`,
            );
        },
        referenced: (current) => providerReferenced(tx, current.id),
      })) ?? notFound('traffic provider');
    if (done.outcome === 'unchanged') return;
    await audit(tx, actor, {
      action: done.outcome === 'archived' ? 'traffic_provider.archived' : 'traffic_provider.deleted',
      target_type: 'traffic_provider',
      target_id: done.row.id,
      details: { name: done.row.name },
    });
  });
}
