import { providerInScope } from '../../db/record-scope.js';
import { UNSCOPED, type DataScope } from '../../db/scope.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { archiveOrDelete } from '../../db/archive.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import {
  campaignHasLeads,
  campaignPage,
  findCampaign,
  findCampaignRow,
  insertCampaign,
  patchCampaign,
  referenced,
  type CampaignFilter,
} from './queries.js';
import type { CreateCampaign, UpdateCampaign } from './schemas.js';
import { parsePrice, priceErrors, shownPrice, storedPrice } from '../../distribution/prices.js';

/** The stored payout as the audit log keeps it (decimal, like the API). */
const payoutOf = (json: string) => shownPrice(parsePrice(json)!);

export const listCampaigns = (db: Kysely<Database>, filter: CampaignFilter, scope: DataScope) =>
  campaignPage(db, filter, scope);

const scopeOf = (actor: Actor) => actor.principal?.scope ?? UNSCOPED;

/** A campaign is its traffic provider's: out of the reader's scope, it answers 404. */
export const getCampaign = async (db: Kysely<Database>, id: string, scope: DataScope) => {
  const c = await findCampaign(db, id);
  return c && providerInScope(scope, c.traffic_provider_id) ? c : notFound('campaign');
};

const campaignRowInScope = async (db: Kysely<Database>, id: string, scope: DataScope, lock = false) => {
  const c = await findCampaignRow(db, id, lock);
  return c && providerInScope(scope, c.traffic_provider_id) ? c : undefined;
};

export async function createCampaign(db: Kysely<Database>, actor: Actor, b: Static<typeof CreateCampaign>) {
  const id = newId();
  const now = nowIso();
  const flow_id = b.flow_id ?? null;
  await db.transaction().execute(async (tx) => {
    await checkReferences(
      tx,
      { traffic_provider_id: b.traffic_provider_id, flow_id, payout: b.payout },
      undefined,
      scopeOf(actor),
    );
    const row = {
      id,
      name: b.name.trim(),
      status: b.status ?? 'active',
      traffic_provider_id: b.traffic_provider_id,
      flow_id,
      countries: JSON.stringify(b.countries ?? []),
      payout: storedPayout(b.payout),
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await insertCampaign(tx, row);
    await audit(tx, actor, {
      action: 'campaign.created',
      target_type: 'campaign',
      target_id: id,
      details: {
        name: row.name,
        status: row.status,
        traffic_provider_id: row.traffic_provider_id,
        flow_id,
        countries: b.countries ?? [],
        payout: payoutOf(row.payout),
      },
    });
  });
  return (await findCampaign(db, id))!;
}

export async function updateCampaign(db: Kysely<Database>, actor: Actor, id: string, b: Static<typeof UpdateCampaign>) {
  await db.transaction().execute(async (tx) => {
    const c = (await campaignRowInScope(tx, id, scopeOf(actor), true)) ?? notFound('campaign');
    if (c.archived_at) conflict('This campaign is archived; archived campaigns cannot be changed.');
    await checkReferences(tx, b, c, scopeOf(actor));
    const patch = {
      ...(b.name !== undefined ? { name: b.name.trim() } : {}),
      ...(b.status !== undefined ? { status: b.status } : {}),
      ...(b.traffic_provider_id !== undefined ? { traffic_provider_id: b.traffic_provider_id } : {}),
      ...(b.flow_id !== undefined ? { flow_id: b.flow_id } : {}),
      ...(b.countries !== undefined ? { countries: JSON.stringify(b.countries) } : {}),
      ...(b.payout !== undefined ? { payout: storedPayout(b.payout) } : {}),
      updated_at: nowIso(),
    };
    await patchCampaign(tx, c.id, patch);
    const stored = {
      name: c.name,
      status: c.status,
      traffic_provider_id: c.traffic_provider_id,
      flow_id: c.flow_id,
      countries: JSON.parse(c.countries),
      payout: payoutOf(c.payout),
    };
    const before = Object.fromEntries(Object.keys(b).map((k) => [k, stored[k as keyof typeof stored]]));
    await audit(tx, actor, {
      action: 'campaign.updated',
      target_type: 'campaign',
      target_id: c.id,
      details: { name: c.name, before, after: b },
    });
  });
  return (await findCampaign(db, id))!;
}

/** Deleted, or archived while leads refer to it (an archived one stays as it is). */
export async function deleteCampaign(db: Kysely<Database>, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    const done =
      (await archiveOrDelete(tx, 'campaigns', id, {
        find: () => campaignRowInScope(tx, id, scopeOf(actor)),
        referenced: (c) => campaignHasLeads(tx, c.id),
        touch: true,
      })) ?? notFound('campaign');
    const c = done.row;
    if (done.outcome === 'archived') {
      await audit(tx, actor, {
        action: 'campaign.archived',
        target_type: 'campaign',
        target_id: c.id,
        details: { name: c.name, reason: 'leads refer to it' },
      });
    } else if (done.outcome === 'deleted') {
      await audit(tx, actor, {
        action: 'campaign.deleted',
        target_type: 'campaign',
        target_id: c.id,
        details: {
          name: c.name,
          traffic_provider_id: c.traffic_provider_id,
          flow_id: c.flow_id,
          payout: payoutOf(c.payout),
        },
      });
    }
  });
}

export function storedPayout(p: { model: 'cpl' | 'cpa'; amount: number; by_country?: Record<string, number> }): string {
  const errors = priceErrors(p, 'payout');
  if (errors.length) invalid(errors);
  return JSON.stringify(storedPrice(p));
}

/**
 * The provider and flow a campaign is given must exist and not be archived; each bad one is
 * named. Values equal to `current` are not new references and are not checked again.
 */
export async function checkReferences(
  db: Kysely<Database>,
  refs: { traffic_provider_id?: string; flow_id?: string | null; payout?: object },
  current: { traffic_provider_id: string; flow_id: string | null } | undefined,
  scope: DataScope,
) {
  const errors = await referenceErrors(db, refs, current, scope);
  if (errors.length) invalid(errors);
}

/**
 * The same checks as errors, on a body that may not have passed its schema (route config
 * moreChecks): a value of the wrong type is skipped, the schema names it.
 */
export async function referenceErrors(
  db: Kysely<Database>,
  refs: { traffic_provider_id?: unknown; flow_id?: unknown; payout?: unknown },
  current: { traffic_provider_id: string; flow_id: string | null } | undefined,
  scope: DataScope,
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  errors.push(...priceErrors(refs.payout, 'payout'));
  const check = async (
    field: 'traffic_provider_id' | 'flow_id',
    table: 'traffic_providers' | 'flows',
    id: unknown,
    what: string,
  ) => {
    if (typeof id !== 'string' || id === current?.[field]) return;
    // A provider out of the caller's scope is one it does not know.
    const outOfScope = table === 'traffic_providers' && !providerInScope(scope, id);
    const row = outOfScope ? undefined : await referenced(db, table, id);
    if (!row) errors.push({ field, message: `no ${what} with that id` });
    else if (row.archived_at) errors.push({ field, message: `the ${what} is archived` });
  };
  await check('traffic_provider_id', 'traffic_providers', refs.traffic_provider_id, 'traffic provider');
  await check('flow_id', 'flows', refs.flow_id, 'flow');
  return errors;
}
