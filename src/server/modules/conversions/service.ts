import { UNSCOPED } from '../../db/scope.js';
import type { DB } from '../../db/database.js';
import { toCents } from '../../distribution/prices.js';
import { conflict, invalid, notFound } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { applyConversion } from './apply.js';
import { findLeadForConversion } from './queries.js';

export interface ConversionInput {
  sale_status?: string;
  ftd?: boolean;
  ftd_at?: string;
  revenue?: number;
}

/**
 * An operator records what a partner said elsewhere (by phone, in its CRM): the same effect as a
 * postback, with the operator as the source in the lead's status history and the audit log.
 * 409 for a lead that is not delivered.
 */
export async function setLeadConversion(db: DB, actor: Actor, leadId: string, b: ConversionInput) {
  const revenue_cents =
    b.revenue === undefined
      ? undefined
      : (toCents(b.revenue) ?? invalid([{ field: 'revenue', message: 'must have at most 2 decimals (cents)' }]));
  if (b.ftd_at !== undefined && Date.parse(b.ftd_at) > Date.now() + 5 * 60_000)
    invalid([{ field: 'ftd_at', message: 'is more than 5 minutes in the future' }]);
  return db.transaction().execute(async (tx) => {
    const lead = (await findLeadForConversion(tx, leadId, actor.principal?.scope ?? UNSCOPED)) ?? notFound('lead');
    if (lead.status !== 'delivered')
      conflict(`This lead is ${lead.status}, not delivered: only a delivered lead converts.`);
    const ftd_at = b.ftd_at === undefined ? undefined : new Date(b.ftd_at).toISOString();
    const applied = await applyConversion(
      tx,
      lead,
      { sale_status: b.sale_status?.trim(), ftd: b.ftd, ftd_at, revenue_cents },
      'operator',
    );
    if (applied.changed)
      await audit(tx, actor, {
        action: 'lead.conversion_set',
        target_type: 'lead',
        target_id: lead.id,
        details: { changes: applied.changes },
      });
    return { changed: applied.changed, notes: applied.notes };
  });
}
