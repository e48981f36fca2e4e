// Demo leads: drawn hour by hour over the period (so ids and created_at ascend together, which
// keeps index inserts at the right edge of the b-trees), routed through each campaign's flow the
// way the distribution engine would, with the delivery attempts that routing made.
import { randomBytes } from 'node:crypto';
import {
  COUNTRIES,
  EMAIL_DOMAINS,
  FUNNELS,
  REJECT_REASONS,
  SALE_STATUSES_OPEN,
  TRAFFIC_SOURCES,
  type CountryDef,
} from './catalog.js';
import { Rng, Weighted } from './random.js';
import { flagBit, type Flag } from '../../src/server/db/lead-flags.js';
import { DEFAULT_WEIGHTS, qualityScore } from '../../src/server/modules/quality/flags.js';
import type { World, WorldCampaign } from './setup.js';

export const LEAD_COLUMNS = [
  'id',
  'created_at',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
  'traffic_provider_id',
  'campaign_id',
  'flow_id',
  'partner_id',
  'status',
  'reason',
  'partner_lead_id',
  'sale_status',
  'autologin_url',
  'delivered_at',
  'ftd_at',
  'status_updated_at',
  'cost_cents',
  'revenue_cents',
  'flags',
  'quality_score',
] as const;

export const ATTEMPT_COLUMNS = [
  'id',
  'lead_id',
  'partner_id',
  'attempt_no',
  'requested_at',
  'duration_ms',
  'http_status',
  'outcome',
  'reason',
  'response_excerpt',
] as const;

type Value = string | number | null;

/** The fraud flags demo leads raise (the velocity flags need a provider's limits, which the demo sets none of). */
const DEMO_FLAGS: Flag[] = ['phone_country', 'phone_type', 'disposable_email', 'ip_country'];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
// UTC hour-of-day shape of traffic: European evenings peak, nights are quiet.
const HOURLY = [
  0.35, 0.25, 0.2, 0.18, 0.2, 0.3, 0.5, 0.8, 1.1, 1.3, 1.4, 1.45, 1.5, 1.5, 1.45, 1.45, 1.5, 1.6, 1.7, 1.65, 1.5, 1.2,
  0.8, 0.5,
];
const IP_FIRST_OCTETS = [
  31, 37, 46, 62, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 109, 176, 178, 185, 188,
  193, 194, 212, 213, 217,
];

/** How many leads each hour of the period gets: exactly `total`, shaped by hour, weekday and a growth trend. */
export function leadsPerHour(rng: Rng, total: number, startMs: number, endMs: number): number[] {
  const hours = Math.max(1, Math.ceil((endMs - startMs) / HOUR_MS));
  const weights: number[] = [];
  let dayNoise = 1;
  for (let h = 0; h < hours; h++) {
    const t = startMs + h * HOUR_MS;
    const d = new Date(t);
    if (h === 0 || d.getUTCHours() === 0) dayNoise = 0.85 + rng.next() * 0.3;
    const weekday = d.getUTCDay();
    const week = weekday === 0 ? 0.7 : weekday === 6 ? 0.75 : 1;
    const trend = 0.8 + (0.4 * h) / hours;
    const partial = Math.min(1, (endMs - t) / HOUR_MS); // the current hour is not over yet
    weights.push(HOURLY[d.getUTCHours()] * week * trend * dayNoise * partial);
  }
  const sum = weights.reduce((a, b) => a + b, 0);
  const counts = weights.map((w) => Math.floor((total * w) / sum));
  let left = total - counts.reduce((a, b) => a + b, 0);
  const picker = new Weighted(
    weights.map((_, i) => i),
    weights,
  );
  while (left-- > 0) counts[picker.draw(rng)]++;
  return counts;
}

const ascii = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

interface Contact {
  first: string;
  last: string;
  email: string;
  phone: string;
  country: string;
}

/** Turns a timestamp into one lead row (plus its attempts), appended to flat parameter arrays. */
export class LeadFactory {
  private readonly campaigns: Weighted<WorldCampaign>;
  private readonly countryByCode = new Map(COUNTRIES.map((c) => [c.code, c]));
  private readonly allCountries = new Weighted(
    COUNTRIES,
    COUNTRIES.map((c) => c.weight),
  );
  private readonly campaignCountries = new Map<string, Weighted<CountryDef>>();
  private readonly recent = new Map<string, Contact[]>(); // per provider: candidates for duplicates
  private randomPool = Buffer.alloc(0);
  private randomAt = 0;
  private serial = 0;
  leadCount = 0;
  attemptCount = 0;

  constructor(
    private readonly rng: Rng,
    private readonly world: World,
    private readonly nowMs: number,
  ) {
    this.campaigns = new Weighted(
      world.campaigns,
      world.campaigns.map((c) => c.weight),
    );
    for (const c of world.campaigns) {
      const defs = c.countries.map((code) => this.countryByCode.get(code)).filter((d): d is CountryDef => !!d);
      if (defs.length)
        this.campaignCountries.set(
          c.id,
          new Weighted(
            defs,
            defs.map((d) => d.weight),
          ),
        );
    }
  }

  /** UUIDv7 carrying the lead's own time, so id order is creation order like live ids. */
  private idAt(ms: number): string {
    if (this.randomAt + 10 > this.randomPool.length) {
      this.randomPool = randomBytes(65536);
      this.randomAt = 0;
    }
    const r = this.randomPool.subarray(this.randomAt, (this.randomAt += 10)).toString('hex');
    const t = ms.toString(16).padStart(12, '0');
    const variant = ((parseInt(r[3], 16) & 0x3) | 0x8).toString(16);
    return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(0, 3)}-${variant}${r.slice(4, 7)}-${r.slice(7, 19)}`;
  }

  private contact(country: CountryDef): Contact {
    const first = this.rng.pick(country.first);
    const last = this.rng.pick(country.last);
    const n = ++this.serial;
    return {
      first,
      last,
      email: `${ascii(first)}.${ascii(last)}${n}@${this.rng.pick(EMAIL_DOMAINS)}`,
      phone: `+${country.dial}${this.rng.int(1, 9)}${this.rng.digits(country.digits - 1)}`,
      country: country.code,
    };
  }

  private ip(): string {
    const r = this.rng;
    return `${r.pick(IP_FIRST_OCTETS)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}`;
  }

  /** Appends one lead to `leads` and its attempts to `attempts`. */
  make(createdMs: number, leads: Value[], attempts: Value[]): void {
    const rng = this.rng;
    const campaign = this.campaigns.draw(rng);
    const countryDef = (this.campaignCountries.get(campaign.id) ?? this.allCountries).draw(rng);
    const created = new Date(createdMs).toISOString();
    const id = this.idAt(createdMs);

    const pool = this.recent.get(campaign.providerId) ?? [];
    this.recent.set(campaign.providerId, pool);
    const duplicate = pool.length > 20 && rng.chance(campaign.dupRate);
    const who = duplicate ? rng.pick(pool) : this.contact(countryDef);
    if (!duplicate) {
      if (pool.length < 500) pool.push(who);
      else pool[rng.int(0, 499)] = who;
    }
    const country = this.countryByCode.get(who.country) ?? countryDef;

    let status = 'rejected';
    let reason: string | null = null;
    let partnerIdx = -1;
    let deliveredMs: number | null = null;
    let ftdMs: number | null = null;
    let saleStatus: string | null = null;
    let acceptedLeadId: string | null = null;
    let updatedMs = createdMs;
    let clock = createdMs + rng.int(40, 400); // intake work before the first partner call
    const age = this.nowMs - createdMs;

    if (duplicate) {
      status = 'duplicate';
      reason = 'Duplicate of an earlier lead (email) within 720 h';
    } else if (age < 5 * 60_000 && rng.chance(0.4)) {
      status = rng.chance(0.5) ? 'new' : 'pending';
    } else {
      const eligible = campaign.targets.filter((p) => {
        const c = this.world.partners[p].countries;
        return c.length === 0 || c.includes(country.code);
      });
      if (!eligible.length) reason = `No partner in the flow accepts ${country.code}`;
      let attemptNo = 0;
      for (const p of eligible) {
        if (attemptNo >= campaign.maxAttempts) break;
        const partner = this.world.partners[p];
        attemptNo++;
        partnerIdx = p;
        const roll = rng.next();
        const failed = roll < 0.025;
        // acceptRate is the partner's appetite; most offers still fail on its own checks (cap, hours, quality).
        const accepted = !failed && roll < 0.025 + partner.acceptRate * 0.6;
        const duration = failed ? (rng.chance(0.6) ? 8000 : rng.int(20, 300)) : rng.int(150, 1800);
        const outcome = failed ? (duration === 8000 ? 'timeout' : 'error') : accepted ? 'accepted' : 'rejected';
        const partnerLeadId = accepted ? `${partner.slug.slice(0, 3).toUpperCase()}-${rng.digits(8)}` : null;
        const why = failed
          ? outcome === 'timeout'
            ? 'No answer within 8000 ms'
            : 'Connection reset by the partner'
          : accepted
            ? null
            : rng.pick(REJECT_REASONS);
        attempts.push(
          this.idAt(clock),
          id,
          partner.id,
          attemptNo,
          new Date(clock).toISOString(),
          duration,
          failed ? (outcome === 'timeout' ? null : 502) : accepted ? 200 : rng.chance(0.7) ? 200 : 422,
          outcome,
          why,
          failed
            ? null
            : accepted
              ? `{"success":true,"data":{"lead_id":"${partnerLeadId}"}}`
              : `{"success":false,"message":"${why}"}`,
        );
        this.attemptCount++;
        clock += duration + rng.int(5, 60);
        if (accepted) {
          status = 'delivered';
          reason = null;
          deliveredMs = clock;
          saleStatus = 'New';
          // Partners work their leads: a sales status arrives hours later, sometimes a deposit.
          if (rng.chance(partner.ftdRate)) {
            const at = clock + Math.round(rng.exp(3 * DAY_MS)) + 10 * 60_000;
            if (at < this.nowMs) ftdMs = at;
          }
          if (ftdMs !== null) {
            saleStatus = 'Deposited';
            updatedMs = ftdMs;
          } else {
            const at = clock + Math.round(rng.exp(20 * HOUR_MS));
            if (at < this.nowMs) {
              saleStatus = rng.pick(SALE_STATUSES_OPEN);
              updatedMs = at;
            } else updatedMs = clock;
          }
          acceptedLeadId = partnerLeadId;
          break;
        }
        status = failed ? 'failed' : 'rejected';
        reason = why;
        updatedMs = clock;
      }
    }

    const partner = partnerIdx >= 0 ? this.world.partners[partnerIdx] : null;
    const delivered = status === 'delivered';
    const cost =
      campaign.payout.model === 'cpl'
        ? delivered
          ? campaign.payout.amount_cents
          : 0
        : ftdMs !== null
          ? campaign.payout.amount_cents
          : 0;
    const revenue =
      !partner || !delivered
        ? 0
        : partner.deal.model === 'cpl'
          ? partner.deal.cents
          : ftdMs !== null
            ? partner.deal.cents
            : 0;
    const subSource = rng.pick(TRAFFIC_SOURCES);
    // About one fresh lead in twelve raises a fraud flag at intake, a few of them two.
    let flags = 0;
    if (!duplicate && rng.chance(0.08)) {
      flags = flagBit(rng.pick(DEMO_FLAGS));
      if (rng.chance(0.2)) flags |= flagBit(rng.pick(DEMO_FLAGS));
    }
    leads.push(
      id,
      created,
      who.first,
      who.last,
      who.email,
      who.phone,
      country.code,
      this.ip(),
      country.language,
      rng.pick(FUNNELS),
      `cr${rng.int(1, 40)}`,
      subSource,
      rng.hex(12),
      rng.chance(0.3) ? `ad${rng.int(100, 999)}` : null,
      rng.chance(0.1) ? `pl${rng.int(1, 9)}` : null,
      campaign.providerId,
      campaign.id,
      campaign.flowId,
      partner?.id ?? null,
      status,
      reason,
      acceptedLeadId,
      saleStatus,
      delivered ? `https://trade.${partner!.slug}.example/autologin?t=${rng.hex(24)}` : null,
      deliveredMs === null ? null : new Date(deliveredMs).toISOString(),
      ftdMs === null ? null : new Date(ftdMs).toISOString(),
      new Date(updatedMs).toISOString(),
      cost,
      revenue,
      flags,
      qualityScore(flags, DEFAULT_WEIGHTS),
    );
    this.leadCount++;
  }
}

export { DAY_MS, HOUR_MS };
