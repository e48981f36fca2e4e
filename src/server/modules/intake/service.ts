import {
  sql,
  type CompiledQuery,
  type ExpressionBuilder,
  type InferResult,
  type Insertable,
  type Kysely,
} from 'kysely';
import { PROVIDER_COLUMNS, sameProvider, type IntakeProvider } from '../../auth/machine-tokens.js';
import { compiledOnce, compiledPerShape, insertRow, type Data } from '../../db/compiled.js';
import { isPostgres, PREPARED, type DB } from '../../db/database.js';
import { fromJson, jsonArrayFrom, jsonObjectFrom } from '../../db/json.js';
import { newId } from '../../db/ids.js';
import { providerFact, recordProviderFacts, type PendingFact } from '../../db/provider-facts.js';
import type {
  Database,
  IntakeRequestsTable,
  LeadAttemptsTable,
  LeadStatus,
  LeadsTable,
  LeadVelocityTable,
} from '../../db/tables.js';
import { callLease, firstAttempt } from '../../distribution/engine.js';
import { planAtIntake, routeOf, type LeadRow, type Plan } from '../../distribution/route.js';
import { conflict, invalid, type FieldError } from '../../http/errors.js';
import {
  activePolicy,
  checkedFields,
  duplicateOf,
  duplicateQuery,
  lockNames,
  serialized,
  windowStart,
} from './duplicates.js';
import type { IntakeAnswer } from './schemas.js';
import { requestHash, type IntakeInput, type NormalizedLead } from './validate.js';
import type { StoredDuplicatePolicy } from '../traffic-providers/schemas.js';
import { blockingEntry, type BlockingEntry } from '../quality/blocklist-queries.js';
import { leadKeys } from '../quality/match-keys.js';
import { blocklistSecret } from '../quality/match-secret.js';
import { blocklistShapes } from '../quality/blocklist-shapes.js';
import { leadFlags, qualityScore } from '../quality/flags.js';
import { activeLimits, countUpTo, velocityFlags, velocityKey, type VelocityKind } from '../quality/velocity.js';
import { QUALITY_SETTING, settingsOf } from '../quality/settings-service.js';
import { HELD_FOR_PROVIDER, REVIEW_REJECTED, reviewHold } from '../quality/review-rule.js';
import { shippedCountryOf } from '../../geo/ip-country.js';
import { duplicateDigests, NO_DIGESTS } from '../privacy/contact-digests.js';

/** storeLead found the provider changed since the kept row that let the request in: nothing was stored. */
export class ProviderChanged extends Error {}

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A new pending lead belongs to this process for this long; the engine extends it per call. */
const FIRST_LEASE_MS = 30_000;

// Operator reasons for leads refused at intake. The provider is told these as they are (they
// name only the provider's own campaign); every other reason may name partners and is not.
const PAUSED = 'campaign is paused';
const notInCountries = (country: string) => `campaign does not accept ${country} leads`;
const TOLD_AS_IS = /^campaign (is paused|does not accept [A-Z]{2} leads)$/;
/** A lead a blocklist entry matched: the operator's reason names the entry, the provider's does not. */
const BLOCKED = 'blocklisted: ';
const QUALITY = 'the lead did not pass the quality checks';

/** The operator's reason for a lead an entry blocked: its kind, its scope and its id (IP blocks, domains and sub ids by value). */
export const blockedReason = (e: BlockingEntry) =>
  `${BLOCKED}${e.kind.replace('_', ' ')}${e.kind === 'email' || e.kind === 'phone' ? '' : ` ${e.value}`} ` +
  `(${e.traffic_provider_id ? "the provider's" : 'global'} entry ${e.id})`;

/**
 * What the traffic provider is told about a lead. Never the operator's reason itself: that can
 * name partners, and affiliates must not learn who buys their leads.
 */
export function providerReason(status: LeadStatus, reason: string | null): string | null {
  switch (status) {
    case 'duplicate':
      return `duplicate: an earlier lead has the same ${reason?.endsWith('(same phone)') ? 'phone' : 'email'}`;
    case 'rejected':
      if (reason?.startsWith(BLOCKED)) return QUALITY;
      // The operator wrote this reason for the provider when rejecting the lead in review.
      if (reason?.startsWith(REVIEW_REJECTED)) return reason.slice(REVIEW_REJECTED.length);
      return reason && TOLD_AS_IS.test(reason) ? reason : 'no buyer accepted the lead';
    case 'failed':
      return 'delivery failed; the lead is kept';
    case 'held':
      return HELD_FOR_PROVIDER;
    default:
      return null;
  }
}

export const answerOf = (
  id: string,
  o: { status: LeadStatus; autologin_url: string | null; reason: string | null },
): IntakeAnswer => ({
  id,
  // A held lead is pending to its provider (contract §2); 'new' is never a lead that came through intake.
  status: (o.status === 'held' ? 'pending' : o.status) as IntakeAnswer['status'],
  autologin_url: o.autologin_url,
  reason: providerReason(o.status, o.reason),
});

/** A stored lead's current state, as the provider sees it. */
export async function currentAnswer(db: Kysely<Database>, leadId: string): Promise<IntakeAnswer> {
  const row = await db
    .selectFrom('leads')
    .select(['status', 'autologin_url', 'reason'])
    .where('id', '=', leadId)
    .executeTakeFirstOrThrow();
  return answerOf(leadId, row);
}

interface CampaignRef {
  id: string;
  status: 'active' | 'paused';
  flow_id: string | null;
  countries: string;
}

/**
 * The campaign a lead goes to: the one named (this provider's, not archived), or else the
 * provider's only active one. (Deleted between this read and the lead's insert, which only a
 * campaign without leads can be: the insert's foreign key answers 409, and the provider's retry
 * is told the campaign is gone.)
 */
export async function resolveCampaign(
  db: Kysely<Database>,
  providerId: string,
  campaignId: string | null,
): Promise<CampaignRef | FieldError> {
  return pickCampaign(await campaignQuery(db, providerId, campaignId).execute(), campaignId);
}

function campaignQuery(db: Kysely<Database>, providerId: string, campaignId: string | null) {
  let q = db
    .selectFrom('campaigns')
    .select(['id', 'status', 'flow_id', 'countries'])
    .where('traffic_provider_id', '=', providerId)
    .where('archived_at', 'is', null);
  q = campaignId !== null ? q.where('id', '=', campaignId) : q.where('status', '=', 'active');
  return q.orderBy('id');
}

function pickCampaign(rows: CampaignRef[], campaignId: string | null): CampaignRef | FieldError {
  if (campaignId !== null) {
    // Another provider's campaign answers like a missing one: providers do not see each other.
    return (
      rows[0] ?? { field: 'campaign_id', message: 'is not a campaign of this traffic provider (or it was deleted)' }
    );
  }
  if (rows.length === 1) return rows[0];
  return {
    field: 'campaign_id',
    message: rows.length
      ? `is required: this traffic provider has ${rows.length} active campaigns`
      : 'is required: this traffic provider has no active campaign',
  };
}

/** A new lead's delivery, its first attempt stored with the lead (distribution/engine.ts, firstAttempt). */
export interface Started {
  plan: Plan;
  attemptId: string;
  lease: string;
}

export type Stored =
  | { replay: true; leadId: string }
  | { replay: false; leadId: string; status: LeadStatus; reason: string | null; started: Started | null };

/**
 * What an intake checks, in one statement (one round trip on PostgreSQL): an earlier request
 * with this Idempotency-Key, the campaign (with its name, payout and flow: its targets and their
 * partners, what the new lead's delivery needs), and an earlier lead with the same contacts.
 * Compiled once per shape (db/compiled.ts): whether a campaign is named, and the duplicate
 * checks the provider's policy makes. Arguments: provider, key ('' for none), the campaign when
 * named, email, phone, the window's start. And the blocklist entry that blocks the lead, if one
 * does (its keys as JSON, and now: modules/quality), and the quality settings (the flags' weights).
 */
function buildIntakeRead(
  db: DB,
  named: boolean,
  policy: StoredDuplicatePolicy | null,
  velocityCounts: number,
  blocking: boolean,
  confirming: boolean,
  args: string[],
) {
  const [providerId, key, ...rest] = args;
  // The blocklist's probe only while the lists hold a shape of the lead's keys: the subquery costs
  // intake about a tenth of its leads/s on SQLite even over an empty list (bench/RESULTS.md).
  const [blockKeys, now] = blocking ? rest.splice(0, 2) : [];
  const campaignId = named ? rest.shift()! : null;
  const fields = policy ? checkedFields(policy) : [];
  const contacts = Object.fromEntries(fields.map((f) => [f, rest.shift()!])) as Record<'email' | 'phone', string>;
  const digests = Object.fromEntries(fields.map((f) => [f, rest.shift()!])) as Record<'email' | 'phone', string>;
  return db
    .selectNoFrom(() => [
      jsonObjectFrom(
        db,
        db
          .selectFrom('intake_requests')
          .select(['request_hash', 'lead_id', 'created_at'])
          .where('traffic_provider_id', '=', providerId)
          .where('idempotency_key', '=', key),
      ).as('earlier'),
      jsonArrayFrom(
        db,
        campaignQuery(db, providerId, campaignId).select((eb) => [
          'name',
          'payout',
          ...routeOf(db, eb, eb.ref('campaigns.flow_id')),
        ]),
      ).as('campaigns'),
      (policy
        ? jsonObjectFrom(db, duplicateQuery(db, policy, contacts, digests, providerId, rest.shift()!))
        : sql<null>`null`
      ).as('duplicate'),
      // The velocity counts (v0, v1, …): key, window start, limit for each kind the provider limits (velocity.ts).
      ...(Array.from({ length: velocityCounts }, (_, i) => {
        const [k, since, limit] = rest.splice(0, 3);
        return countUpTo(db, providerId, k, since, limit as unknown as number).as(`v${i}`);
      }) as unknown as [ReturnType<ReturnType<typeof sql<null>>['as']>]),
      (blocking ? jsonObjectFrom(db, blockingEntry(db, blockKeys!, providerId, now!)) : sql<null>`null`).as('blocked'),
      db.selectFrom('settings').select('value').where('key', '=', QUALITY_SETTING).as('quality'),
      // The provider's row, when the request was let in by a kept one (auth/machine-tokens.ts).
      (confirming
        ? jsonObjectFrom(db, db.selectFrom('traffic_providers').select(PROVIDER_COLUMNS).where('id', '=', providerId))
        : sql<null>`null`
      ).as('provider'),
    ])
    .modifyEnd(sql.raw(PREPARED));
}

type IntakeReadRow = InferResult<ReturnType<typeof buildIntakeRead>>[number];
const intakeReads = new Map<
  string,
  { compile: (db: DB, ...args: (string | number)[]) => CompiledQuery<IntakeReadRow> }
>();

/** A provider's velocity limits, each with the lead's key for it and its lock name. */
type Velocity = { kind: VelocityKind; limit: number; key: string }[];

/** The intake's read for this shape, and the arguments it binds. */
function intakeRead(
  provider: IntakeProvider,
  key: string | null,
  campaignId: string | null,
  policy: StoredDuplicatePolicy | null,
  lead: NormalizedLead,
  now: Date,
  velocity: Velocity,
  windowMs: number,
  blockKeys: string,
  digests: Record<'email' | 'phone', string>,
) {
  const since = new Date(now.getTime() - windowMs).toISOString();
  const blocking = blockKeys !== '[]';
  const args = [
    provider.id,
    key ?? '',
    ...(blocking ? [blockKeys, now.toISOString()] : []),
    ...(campaignId !== null ? [campaignId] : []),
    ...(policy
      ? [
          ...checkedFields(policy).map((f) => lead[f]),
          ...checkedFields(policy).map((f) => digests[f]),
          windowStart(policy, now),
        ]
      : []),
    ...velocity.flatMap((v) => [v.key, since, v.limit]),
  ];
  const shape = JSON.stringify([
    campaignId !== null,
    policy && checkedFields(policy),
    policy?.scope,
    velocity.length,
    blocking,
    provider.kept,
  ]);
  let read = intakeReads.get(shape);
  if (!read)
    intakeReads.set(
      shape,
      (read = compiledOnce((db: DB, ...a: (string | number)[]) =>
        buildIntakeRead(db, campaignId !== null, policy, velocity.length, blocking, provider.kept, a as string[]),
      )),
    );
  return (db: DB) => read.compile(db, ...args);
}

/**
 * Stores the lead before any partner is called: serialized on its duplicate-checked values and
 * Idempotency-Key (duplicates.ts), it answers a retry with the first lead, finds duplicates,
 * applies the campaign's own rules, and inserts the lead (pending: leased to this process for
 * delivery) with its Idempotency-Key, and with its first delivery attempt when that needs no
 * cap (`started`: the delivery goes on from the partner call). The insert is one statement on
 * PostgreSQL (all or nothing without a transaction: duplicates.ts, serialized).
 */
export async function storeLead(db: Kysely<Database>, provider: IntakeProvider, input: IntakeInput): Promise<Stored> {
  const { lead, campaignId, idempotencyKey: key } = input;
  const policy = activePolicy(provider.duplicate_policy);
  const hash = requestHash(input);
  // The flags that need no database: before the wait, so serialized intakes do not wait for them.
  const staticFlags = leadFlags(lead, shippedCountryOf, input.phoneFacts);
  // Velocity: counted under a lock on each limited value, so concurrent intakes count each other.
  const { limits, windowMs } = activeLimits(provider.velocity_policy);
  const velocity: Velocity = limits.map((l) => ({ ...l, key: velocityKey(l.kind, lead) }));
  const shapes = await blocklistShapes(db);
  // Only keys of shapes the lists hold: none while they are empty (blocklist-shapes.ts); email and
  // phone keys as stored, HMAC digests (quality/match-secret.ts).
  const blockKeys = shapes.size ? JSON.stringify(leadKeys(lead, shapes, await blocklistSecret(db))) : '[]';
  // The duplicate check also finds leads whose contacts the retention purged, by their digests.
  const digests = policy ? duplicateDigests(lead, await blocklistSecret(db)) : NO_DIGESTS;
  const names = [...lockNames(policy, lead, provider.id, key), ...velocity.map((v) => `vel:${provider.id}:${v.key}`)];
  // The read runs after the wait (a lead stored while this one waited is the earlier one); its
  // windows start from when it was sent.
  const asked = new Date();
  const first = intakeRead(provider, key, campaignId, policy, lead, asked, velocity, windowMs, blockKeys, digests)(db);
  return serialized(db, names.sort(), first, async ([read], { db: tx, last }): Promise<Stored> => {
    const now = new Date();
    const at = now.toISOString();
    // Let in by a kept row that is no longer the provider's: nothing is written (the caller
    // authenticates afresh and stores the lead again).
    if (provider.kept && !sameProvider(provider.row, fromJson(read.provider))) throw new ProviderChanged();
    const row0 = read as Record<string, unknown>;
    const flags =
      staticFlags |
      velocityFlags(
        velocity,
        velocity.map((_, i) => row0[`v${i}`] as number | string),
      );
    if (key !== null) {
      const earlier = fromJson(read.earlier);
      if (earlier && earlier.created_at >= new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString()) {
        if (earlier.request_hash !== hash)
          conflict('Idempotency-Key was used for a different lead; send a new key for a new lead.');
        return { replay: true, leadId: earlier.lead_id };
      }
      if (earlier) {
        await tx
          .deleteFrom('intake_requests')
          .where('traffic_provider_id', '=', provider.id)
          .where('idempotency_key', '=', key)
          .execute();
      }
    }
    const campaign = pickCampaign(fromJson(read.campaigns), campaignId);
    if ('field' in campaign) invalid([campaign]);
    const c = campaign as CampaignRef & Pick<LeadRow, 'payout' | 'flow' | 'targets'> & { name: string };

    const duplicate = policy ? duplicateOf(fromJson(read.duplicate), policy, lead, digests.email) : null;
    const countries = JSON.parse(c.countries) as string[];
    let status: LeadStatus = 'pending';
    let reason: string | null = null;
    const blocked = fromJson(read.blocked) as BlockingEntry | null;
    if (blocked) [status, reason] = ['rejected', blockedReason(blocked)];
    else if (duplicate)
      [status, reason] = ['duplicate', `duplicate of lead ${duplicate.leadId} (same ${duplicate.field})`];
    else if (c.status !== 'active') [status, reason] = ['rejected', PAUSED];
    else if (countries.length && !countries.includes(lead.country))
      [status, reason] = ['rejected', notInCountries(lead.country)];

    const { weights } = settingsOf(read.quality === null ? null : JSON.parse(read.quality));
    const score = qualityScore(flags, weights);
    // The review queue: a lead the provider's or its flow's rule holds waits for an operator.
    if (status === 'pending') {
      const held =
        reviewHold(provider.review_rule, "the provider's", flags, score) ??
        reviewHold(fromJson(c.flow)?.review_rule, "the flow's", flags, score);
      if (held) [status, reason] = ['held', held];
    }
    const id = newId();
    const row = {
      id,
      created_at: at,
      ...lead,
      flags,
      quality_score: score,
      traffic_provider_id: provider.id,
      campaign_id: c.id,
      flow_id: c.flow_id,
      partner_id: null,
      status,
      reason,
      partner_lead_id: null,
      sale_status: null,
      autologin_url: null,
      delivered_at: null,
      ftd_at: null,
      status_updated_at: at,
      cost_cents: 0,
      revenue_cents: 0,
      lease_until: null as string | null,
    };
    // A delivery that needs nothing more from the database starts here: its first attempt is
    // stored with the lead, and the lease covers that call.
    const plan =
      status === 'pending'
        ? planAtIntake(
            {
              ...row,
              campaign_name: c.name,
              campaign_flow_id: c.flow_id,
              payout: c.payout,
              last_attempt: null,
              flow: c.flow,
              targets: c.targets,
            },
            now.getTime(),
          )
        : null;
    const attempt = plan && firstAttempt(plan);
    if (status === 'pending') {
      row.lease_until = new Date(
        Math.max(now.getTime() + FIRST_LEASE_MS, plan ? callLease(plan.order[0], now.getTime()) : 0),
      ).toISOString();
      if (plan) plan.lead.lease_until = row.lease_until;
    }
    const referring: Referring[] = [];
    if (key !== null)
      referring.push([
        'intake_requests',
        { traffic_provider_id: provider.id, idempotency_key: key, request_hash: hash, lead_id: id, created_at: at },
      ]);
    if (attempt) referring.push(['lead_attempts', attempt]);
    for (const v of velocity)
      referring.push(['lead_velocity', { traffic_provider_id: provider.id, key: v.key, created_at: at, lead_id: id }]);
    // The provider's log (modules/provider-log): what it was told, one small row per fact.
    referring.push(['provider_log_pending', receivedFact(row)]);
    if (status !== 'pending' && status !== 'held')
      referring.push([
        'provider_log_pending',
        providerFact(provider.id, id, 'refused', { status, reason: providerReason(status, reason) }, at),
      ]);
    if (isPostgres(tx)) await last(insertInOneStatement(tx, row, referring));
    else {
      // Built once per table and columns (db/compiled.ts), as PostgreSQL's one statement is.
      await insertRow(tx, 'leads', row);
      for (const [table, values] of referring)
        if (table === 'provider_log_pending') await recordProviderFacts(tx, [values]);
        else await insertRow(tx, table, values as Record<string, Data>);
    }
    return {
      replay: false,
      leadId: id,
      status,
      reason,
      started: plan && { plan, attemptId: attempt!.id, lease: row.lease_until! },
    };
  });
}

type Referring =
  | ['intake_requests', Insertable<IntakeRequestsTable>]
  | ['lead_attempts', Insertable<LeadAttemptsTable>]
  | ['lead_velocity', Insertable<LeadVelocityTable>]
  | ['provider_log_pending', PendingFact];

/** The provider-log fact of a lead received: what the provider sent that it is shown (no contacts). */
export const receivedFact = (
  r: Insertable<LeadsTable> & { id: string; traffic_provider_id: string; created_at: string },
) =>
  providerFact(
    r.traffic_provider_id,
    r.id,
    'received',
    {
      created_at: r.created_at,
      country: r.country,
      campaign_id: r.campaign_id ?? null,
      sub_id1: r.sub_id1 ?? null,
      sub_id2: r.sub_id2 ?? null,
      sub_id3: r.sub_id3 ?? null,
      sub_id4: r.sub_id4 ?? null,
      sub_id5: r.sub_id5 ?? null,
    },
    r.created_at,
  );

/**
 * PostgreSQL: the lead, its Idempotency-Key and its first attempt in one statement (one round
 * trip); the rows referring to the lead take its id from the lead's insert. Built once per shape
 * (its tables and columns: db/compiled.ts), as Kysely would otherwise build it for every lead.
 */
function insertInOneStatement(tx: Kysely<Database>, row: Insertable<LeadsTable>, referring: Referring[]) {
  const tables = referring.map(([table]) => table);
  return insertLeadWith.compile(tx, tables.join(','), {
    row,
    referring: referring.map(([, { lead_id: _id, ...values }]) => values),
  });
}

const insertLeadWith = compiledPerShape(
  (
    tx: Kysely<Database>,
    tables: string,
    data: { row: Insertable<LeadsTable>; referring: Omit<Referring[1], 'lead_id'>[] },
  ) => {
    const db = tx as unknown as Kysely<any>; // the CTE's types do not follow a list built at run time
    const names = tables ? (tables.split(',') as Referring[0][]) : [];
    if (!names.length) return db.insertInto('leads').values(data.row);
    const leadId = (eb: ExpressionBuilder<any, any>) => eb.selectFrom('l').select('l.id');
    let q = db.with('l', (w) => w.insertInto('leads').values(data.row).returning('id'));
    names.slice(0, -1).forEach((table, i) => {
      q = q.with(`r${i}`, (w) =>
        w.insertInto(table).values({ ...data.referring[i], lead_id: leadId }),
      ) as unknown as typeof q;
    });
    return q.insertInto(names[names.length - 1]).values({ ...data.referring[names.length - 1], lead_id: leadId });
  },
);

/** Forgets Idempotency-Keys recorded before `before` (ISO time); returns how many. */
export async function purgeIdempotencyKeys(db: Kysely<Database>, before: string): Promise<number> {
  const res = await db.deleteFrom('intake_requests').where('created_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
