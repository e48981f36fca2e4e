// The configuration the demo leads refer to: partners, traffic providers, flows with targets and
// campaigns. Made once (when the database has no campaign yet), then read back from the
// database, so --append reuses whatever configuration is there, demo-made or not.
import { issueToken } from '../../src/server/auth/credentials.js';
import type { DB } from '../../src/server/db/database.js';
import { newId, nowIso } from '../../src/server/db/ids.js';
import { FLOWS, PARTNERS, PROVIDERS, type PartnerDef, type ProviderDef } from './catalog.js';

export interface WorldPartner {
  id: string;
  slug: string;
  countries: string[];
  acceptRate: number;
  ftdRate: number;
  deal: PartnerDef['deal'];
}

export interface WorldCampaign {
  id: string;
  providerId: string;
  dupRate: number;
  weight: number;
  flowId: string | null;
  maxAttempts: number;
  /** Partner indexes into World.partners, in the order the flow tries them. */
  targets: number[];
  countries: string[];
  payout: { model: 'cpl' | 'cpa'; amount_cents: number };
}

export interface World {
  partners: WorldPartner[];
  campaigns: WorldCampaign[];
}

export interface WorldSize {
  /** Partners to make (default: the catalog's 12). */
  partners?: number;
  /** Traffic providers to make (default: the catalog's 8). */
  providers?: number;
}

/** The catalog's name of a partner or provider made as its nth copy ("Brokerly #2" → "Brokerly"). */
const catalogName = (name: string) => name.replace(/ #\d+$/, '');

/**
 * The catalog grown (or cut) to `size`: copy n of a partner or provider is named "<name> #n";
 * each set of twelve partners gets its own copy of the flows, and provider copies take their
 * campaigns' flows from the sets in turn, so every partner is offered leads.
 */
function scaledCatalog({ partners = PARTNERS.length, providers = PROVIDERS.length }: WorldSize) {
  const copy = <T extends { name: string }>(base: T, n: number): T =>
    n ? { ...base, name: `${base.name} #${n + 1}` } : base;
  const sets = Math.ceil(partners / PARTNERS.length);
  const partnerDefs: PartnerDef[] = Array.from({ length: partners }, (_, i) => {
    const base = PARTNERS[i % PARTNERS.length];
    const n = Math.floor(i / PARTNERS.length);
    return { ...copy(base, n), slug: n ? `${base.slug}${n + 1}` : base.slug };
  });
  const flows = Array.from({ length: sets }, (_, s) =>
    FLOWS.map((f) => ({
      name: s ? `${f.name} #${s + 1}` : f.name,
      // A partner the last set lacks is taken from the first.
      targets: f.targets.map((t) => (t + s * PARTNERS.length < partners ? t + s * PARTNERS.length : t % partners)),
    })),
  ).flat();
  const providerDefs: ProviderDef[] = Array.from({ length: providers }, (_, v) => {
    const base = PROVIDERS[v % PROVIDERS.length];
    const [n, set] = [Math.floor(v / PROVIDERS.length), v % sets];
    return {
      ...copy(base, n),
      campaigns: base.campaigns.map((c) => ({ ...copy(c, n), flow: c.flow + set * FLOWS.length })),
    };
  });
  return { partnerDefs, flows, providerDefs };
}

/** Inserts the catalog's configuration. Tokens are random and never shown: rotate them to use them. */
async function createCatalog(db: DB, size: WorldSize): Promise<void> {
  const now = nowIso();
  const { partnerDefs, flows, providerDefs } = scaledCatalog(size);
  const partnerIds = partnerDefs.map(() => newId());
  const flowIds = flows.map(() => newId());
  await db.transaction().execute(async (tx) => {
    for (const [i, p] of partnerDefs.entries()) {
      const pb = issueToken('lgp_');
      await tx
        .insertInto('partners')
        .values({
          id: partnerIds[i],
          name: p.name,
          status: 'active',
          countries: JSON.stringify(p.countries),
          working_hours: p.hours
            ? JSON.stringify({ timezone: p.timezone, days: p.days, from: p.hours[0], to: p.hours[1] })
            : null,
          daily_cap: p.dailyCap,
          total_cap: p.totalCap,
          integration: JSON.stringify({
            method: p.method,
            url: `https://api.${p.slug}.example/v2/leads`,
            headers: { 'X-Api-Key': `demo-${p.slug}-key`, 'Content-Type': 'application/json' },
            body_template: {
              first_name: '{{lead.first_name}}',
              last_name: '{{lead.last_name}}',
              email: '{{lead.email}}',
              phone: '{{lead.phone}}',
              country: '{{lead.country}}',
              ip: '{{lead.ip}}',
              source: '{{lead.sub_id1}}',
            },
            success_path: 'success',
            lead_id_path: 'data.lead_id',
            autologin_path: 'data.autologin_url',
            timeout_ms: 8000,
          }),
          postback_token_id: pb.id,
          postback_token_hash: pb.secretHash,
          created_at: now,
          updated_at: now,
          archived_at: null,
        })
        .execute();
    }
    for (const [i, f] of flows.entries()) {
      await tx
        .insertInto('flows')
        .values({
          id: flowIds[i],
          name: f.name,
          status: 'active',
          max_attempts: 3,
          created_at: now,
          updated_at: now,
          archived_at: null,
        })
        .execute();
      for (const [position, partner] of f.targets.entries()) {
        await tx
          .insertInto('flow_targets')
          .values({
            id: newId(),
            flow_id: flowIds[i],
            partner_id: partnerIds[partner],
            position,
            priority: position + 1,
            weight: 100,
            daily_cap: null,
            countries: '[]',
            schedule: null,
          })
          .execute();
      }
    }
    for (const p of providerDefs) {
      const providerId = newId();
      const token = issueToken('lgt_');
      await tx
        .insertInto('traffic_providers')
        .values({
          id: providerId,
          name: p.name,
          status: 'active',
          token_id: token.id,
          token_hash: token.secretHash,
          allowed_ips: '[]',
          duplicate_policy: JSON.stringify({ fields: ['email', 'phone'], window_hours: 720, scope: 'provider' }),
          created_at: now,
          updated_at: now,
          archived_at: null,
        })
        .execute();
      for (const c of p.campaigns) {
        await tx
          .insertInto('campaigns')
          .values({
            id: newId(),
            name: c.name,
            status: 'active',
            traffic_provider_id: providerId,
            flow_id: flowIds[c.flow],
            countries: JSON.stringify(c.countries),
            payout: JSON.stringify({ model: c.model, amount_cents: c.cents, currency: 'USD' }),
            created_at: now,
            updated_at: now,
            archived_at: null,
          })
          .execute();
      }
    }
  });
}

/** A stable number in [0, 1) from a string: traits for partners the catalog does not know. */
function unit(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

async function loadWorld(db: DB): Promise<World> {
  const partnerRows = await db
    .selectFrom('partners')
    .select(['id', 'name', 'countries'])
    .where('archived_at', 'is', null)
    .orderBy('id')
    .execute();
  const partners: WorldPartner[] = partnerRows.map((r) => {
    const known = PARTNERS.find((p) => p.name === catalogName(r.name));
    const u = unit(r.id);
    return {
      id: r.id,
      slug: known?.slug ?? r.name.toLowerCase().replace(/[^a-z0-9]+/g, '') ?? 'partner',
      countries: JSON.parse(r.countries) as string[],
      acceptRate: known?.acceptRate ?? 0.6 + u * 0.25,
      ftdRate: known?.ftdRate ?? 0.03 + u * 0.07,
      deal: known?.deal ?? { model: 'cpa', cents: 50000 + Math.round(u * 80000) },
    };
  });
  const index = new Map(partners.map((p, i) => [p.id, i]));
  const targets = await db
    .selectFrom('flow_targets')
    .select(['flow_id', 'partner_id'])
    .orderBy('flow_id')
    .orderBy('priority')
    .orderBy('position')
    .execute();
  const flows = await db.selectFrom('flows').select(['id', 'max_attempts']).where('archived_at', 'is', null).execute();
  const maxAttempts = new Map(flows.map((f) => [f.id, f.max_attempts]));
  const providers = await db
    .selectFrom('traffic_providers')
    .select(['id', 'name'])
    .where('archived_at', 'is', null)
    .execute();
  const providerDef = new Map(providers.map((p) => [p.id, PROVIDERS.find((d) => d.name === catalogName(p.name))]));
  const campaignRows = await db
    .selectFrom('campaigns')
    .select(['id', 'traffic_provider_id', 'flow_id', 'countries', 'payout'])
    .where('archived_at', 'is', null)
    .orderBy('id')
    .execute();
  const campaigns: WorldCampaign[] = campaignRows
    .filter((c) => providerDef.has(c.traffic_provider_id))
    .map((c) => {
      const def = providerDef.get(c.traffic_provider_id);
      const payout = JSON.parse(c.payout) as { model: 'cpl' | 'cpa'; amount_cents: number };
      return {
        id: c.id,
        providerId: c.traffic_provider_id,
        dupRate: def?.dupRate ?? 0.07,
        weight: def ? def.weight / def.campaigns.length : 4,
        flowId: c.flow_id !== null && maxAttempts.has(c.flow_id) ? c.flow_id : null,
        maxAttempts: (c.flow_id && maxAttempts.get(c.flow_id)) || 1,
        targets: targets
          .filter((t) => t.flow_id === c.flow_id && index.has(t.partner_id))
          .map((t) => index.get(t.partner_id)!),
        countries: JSON.parse(c.countries) as string[],
        payout: { model: payout.model === 'cpa' ? 'cpa' : 'cpl', amount_cents: Number(payout.amount_cents) || 0 },
      };
    });
  return { partners, campaigns };
}

/** Makes the catalog's configuration (of `size`) if there is no campaign yet, then reads the world back. */
export async function prepareWorld(db: DB, size: WorldSize = {}): Promise<{ world: World; created: boolean }> {
  const any = await db
    .selectFrom('campaigns')
    .select('id')
    .where('archived_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  if (!any) await createCatalog(db, size);
  const world = await loadWorld(db);
  if (!world.campaigns.length)
    throw new Error('No usable campaign (each needs an active traffic provider) to attach leads to.');
  return { world, created: !any };
}
