import type { DB } from '../../db/database.js';
import { partnerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
import { capSlots, readUsage, usedOf, type CapOwner, type CapSlot } from '../../distribution/caps.js';
import type { CapCounts } from '../../db/tables.js';

// The cap usage view: for each partner and each flow target with caps (and each country with a
// cap of its own), used / cap today, this hour and in all, in the partner's local windows. The
// slots are the engine's own (caps.ts, capSlots), so the numbers are the ones it reserves against.

interface Row {
  partner_id: string;
  partner_name: string;
  flow_id: string | null;
  flow_name: string | null;
  target_id: string | null;
  country: string | null;
  counts: CapCounts;
  slots: CapSlot[];
}

const NO_PARTNER_CAPS = { daily_cap: null, hourly_cap: null, total_cap: null };

/** The caps of the partners in the reader's scope (a partner's caps count every provider's leads). */
export async function capUsage(db: DB, now: number, scope: DataScope) {
  let partnerQuery = db
    .selectFrom('partners')
    .select(['id', 'name', 'daily_cap', 'hourly_cap', 'total_cap', 'working_hours'])
    .where('archived_at', 'is', null);
  const inScope = partnerIdInScope(scope, 'partners.id');
  if (inScope) partnerQuery = partnerQuery.where(inScope);
  const partners = await partnerQuery.orderBy('name').orderBy('id').execute();
  const targets = await db
    .selectFrom('flow_targets as t')
    .innerJoin('flows as f', 'f.id', 't.flow_id')
    .select([
      't.id',
      't.flow_id',
      't.partner_id',
      'f.name as flow_name',
      't.daily_cap',
      't.hourly_cap',
      't.total_cap',
      't.country_caps',
      't.cap_counts',
    ])
    .where('f.archived_at', 'is', null)
    .orderBy('f.name')
    .orderBy('t.id')
    .execute();
  const rows: Row[] = [];
  for (const p of partners) {
    const partner: CapOwner['partner'] = {
      id: p.id,
      daily_cap: p.daily_cap,
      hourly_cap: p.hourly_cap,
      total_cap: p.total_cap,
      working_hours: p.working_hours ? JSON.parse(p.working_hours) : null,
    };
    const own = {
      partner_id: p.id,
      partner_name: p.name,
      target_id: null,
      flow_id: null,
      flow_name: null,
      country: null,
    };
    const slots = capSlots({ partner, target: null }, now, '');
    if (slots.length) rows.push({ ...own, counts: 'deliveries', slots });
    for (const t of targets.filter((x) => x.partner_id === p.id)) {
      const countryCaps = JSON.parse(t.country_caps) as Record<string, number>;
      const target = {
        id: t.id,
        flow_id: t.flow_id,
        daily_cap: t.daily_cap,
        hourly_cap: t.hourly_cap,
        total_cap: t.total_cap,
        country_caps: {},
        cap_counts: t.cap_counts,
      };
      const where = { ...own, flow_id: t.flow_id, flow_name: t.flow_name, target_id: t.id, counts: t.cap_counts };
      const targetSlots = capSlots({ partner: { ...partner, ...NO_PARTNER_CAPS }, target }, now, '');
      if (targetSlots.length) rows.push({ ...where, slots: targetSlots });
      for (const country of Object.keys(countryCaps).sort()) {
        const slots = capSlots(
          {
            partner: { ...partner, ...NO_PARTNER_CAPS },
            target: {
              ...target,
              daily_cap: null,
              hourly_cap: null,
              total_cap: null,
              country_caps: { [country]: countryCaps[country] },
            },
          },
          now,
          country,
        );
        rows.push({ ...where, country, slots });
      }
    }
  }
  const usage = await readUsage(
    db,
    rows.flatMap((r) => r.slots),
  );
  const use = (r: Row, window: CapSlot['window']) => {
    const s = r.slots.find((x) => x.window === window);
    return s ? { used: usedOf(s, usage), cap: s.cap, period: s.period } : null;
  };
  return {
    at: new Date(now).toISOString(),
    data: rows.map((r) => {
      const { slots: _slots, ...where } = r;
      return { ...where, day: use(r, 'day'), hour: use(r, 'hour'), total: use(r, 'total') };
    }),
  };
}
