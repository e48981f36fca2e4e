import { countryRefusal } from '../../distribution/eligibility.js';
import type { RouteOverride } from '../../distribution/route.js';
import type { DB } from '../../db/database.js';
import { rowInScope, type DataScope } from '../../db/scope.js';
import { HttpProblem, conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { claimForRedelivery, isLiveFlow, leadDetail, leadStatus, livePartnerCountries } from './queries.js';
import { canSeeContacts } from './search.js';
import { recordContactView } from '../privacy/service.js';

// The leads' use cases that change something or leave a record: redelivery and the export's
// audit record. (Search, detail and the export's file are reads: search.ts, queries.ts, exporter.ts.)

/** How long the claim holds the lead before the engine's own lease takes over. */
const CLAIM_MS = 30_000;

/**
 * The chosen flow or partner must exist and not be archived, and a chosen partner must take the
 * lead's country (a paused one is the engine's call: it rejects with a reason).
 */
async function overrideOf(
  db: DB,
  body: { flow_id?: string; partner_id?: string },
  country: string,
  scope: DataScope,
): Promise<RouteOverride> {
  const errors: FieldError[] = [];
  // A role limited to some partners sends a lead only to one of them, never through a flow
  // (which could hand it to any partner); a partner out of its scope is one it does not know.
  if (scope.partnerIds !== null) {
    if (body.partner_id === undefined)
      invalid([{ field: 'partner_id', message: 'is required: your role is limited to some partners; choose one' }]);
    if (!scope.partnerIds.includes(body.partner_id!))
      invalid([{ field: 'partner_id', message: 'names no partner (or an archived one)' }]);
  }
  if (body.flow_id !== undefined && body.partner_id !== undefined) {
    invalid([{ field: 'partner_id', message: 'must not be sent together with flow_id: choose a flow or a partner' }]);
  }
  if (body.flow_id !== undefined && !(await isLiveFlow(db, body.flow_id)))
    errors.push({ field: 'flow_id', message: 'names no flow (or an archived one)' });
  if (body.partner_id !== undefined) {
    const countries = await livePartnerCountries(db, body.partner_id);
    const refusal = countries && countryRefusal(country, [], countries);
    if (!countries) errors.push({ field: 'partner_id', message: 'names no partner (or an archived one)' });
    else if (refusal)
      errors.push({ field: 'partner_id', message: `this partner ${refusal} leads (it takes ${countries.join(', ')})` });
  }
  if (errors.length) invalid(errors);
  return body.flow_id !== undefined
    ? { flowId: body.flow_id }
    : body.partner_id !== undefined
      ? { partnerId: body.partner_id }
      : {};
}

/**
 * A rejected or failed lead sent through a flow or to a partner again: claimed atomically
 * (of two redeliveries one wins), recorded, delivered; answered as the lead's detail.
 */
export async function redeliverLead(
  db: DB,
  delivery: { run(leadId: string, override: RouteOverride): Promise<unknown> },
  actor: Actor,
  id: string,
  body: { flow_id?: string; partner_id?: string },
) {
  const { scope } = principalOf(actor);
  const lead = await leadStatus(db, id);
  if (!lead || !rowInScope(scope, lead)) return notFound('lead');
  const override = await overrideOf(db, body, lead.country, scope);
  if (lead.status === 'duplicate')
    conflict("This lead is a duplicate by its traffic provider's policy; duplicates are not redelivered.");
  if (lead.erased_at !== null)
    conflict('The contacts of this lead were erased (an erasure or the retention settings); a partner cannot take it.');
  if (lead.status !== 'rejected' && lead.status !== 'failed') {
    conflict(`This lead is ${lead.status}; only rejected or failed leads can be redelivered.`);
  }

  const now = Date.now();
  await db.transaction().execute(async (tx) => {
    // The claim: of two redeliveries (or a redelivery and anything else that moves the
    // lead on), only one finds it still rejected or failed.
    if (!(await claimForRedelivery(tx, id, now, CLAIM_MS))) {
      throw new HttpProblem(409, 'conflict', 'This lead was just redelivered (or otherwise moved on) by someone else.');
    }
    await audit(tx, actor, {
      action: 'lead.redelivered',
      target_type: 'lead',
      target_id: id,
      details: {
        from_status: lead.status,
        ...(override.flowId ? { flow_id: override.flowId } : {}),
        ...(override.partnerId ? { partner_id: override.partnerId } : {}),
      },
    });
  });

  // Outside any transaction: the engine calls partners.
  await delivery.run(id, override);
  return viewLead(db, actor, id);
}

/** A bulk copy of leads leaves the system: who took which selection, with or without contacts. */
export async function recordExport(db: DB, actor: Actor, filters: unknown, contacts: boolean) {
  await audit(db, actor, { action: 'lead.exported', target_type: 'lead', details: { filters, contacts } });
  if (contacts) await recordContactView(db, actor, { exportFilter: filters });
}

/** One lead's detail; read with contacts unmasked, the read goes into the contact-view log (one insert). */
export async function viewLead(db: DB, actor: Actor, id: string) {
  const p = principalOf(actor);
  const contacts = canSeeContacts(p);
  const lead = (await leadDetail(db, id, contacts, p.scope)) ?? notFound('lead');
  if (contacts) await recordContactView(db, actor, { leadId: lead.id });
  return lead;
}
