// What a traffic provider's portal shows (issue 27), as operators read and set it: the settings
// of portal-settings.ts and the words partners have used on its leads, to map.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { providerInScope } from '../../db/record-scope.js';
import { maskContactLike } from '../../privacy/mask.js';
import { principalOf } from '../../types.js';
import { audit, scopeOf, type Actor } from '../audit/service.js';
import { readPortalSettings, type PortalSettings } from './portal-settings.js';
import { findTrafficProvider, partnerWords, patchTrafficProvider } from './queries.js';
import type { PutPortalSettings } from './portal-schemas.js';

const WORDS_SHOWN = 200;

export async function getProviderPortal(db: Kysely<Database>, actor: Actor, id: string) {
  // A provider out of the reader's scope (a role limited to others) is not found, like one that is not there.
  const settings =
    (providerInScope(scopeOf(actor), id) && (await readPortalSettings(db, id))) || notFound('traffic provider');
  const scope = scopeOf(actor);
  const words = await partnerWords(db, id, WORDS_SHOWN, scope);
  // A partner's word may quote a lead's contacts: masked without leads:contacts, as on the Leads filter.
  const contacts = principalOf(actor).permissions.has('leads:contacts');
  return { ...settings, partner_words: contacts ? words : [...new Set(words.map(maskContactLike))] };
}

/** The map with its keys trimmed and lower-cased; two keys that become one are refused, by name. */
function normalisedMap(map: Record<string, string>): PortalSettings['sale_status_map'] {
  const errors: FieldError[] = [];
  const out: Record<string, string> = {};
  for (const [key, word] of Object.entries(map)) {
    const k = key.trim().toLowerCase();
    if (k === '') errors.push({ field: `sale_status_map/${key}`, message: 'is blank: name a partner word' });
    else if (k in out)
      errors.push({
        field: `sale_status_map/${key}`,
        message: `is the same word as another key once trimmed and lower-cased ("${k}")`,
      });
    else out[k] = word;
  }
  if (errors.length) invalid(errors);
  return out as PortalSettings['sale_status_map'];
}

/** Replaces the provider's portal settings (409 when archived); audited with before and after. */
export async function putProviderPortal(db: Kysely<Database>, actor: Actor, id: string, b: PutPortalSettings) {
  const map = normalisedMap(b.sale_status_map);
  await db.transaction().execute(async (tx) => {
    const current =
      (providerInScope(scopeOf(actor), id) && (await findTrafficProvider(tx, id))) || notFound('traffic provider');
    if (current.archived_at) conflict('This traffic provider is archived and cannot be changed.');
    const before = (await readPortalSettings(tx, id))!;
    await patchTrafficProvider(tx, id, {
      portal_enabled: b.portal_enabled ? 1 : 0,
      portal_sale_status: b.show_sale_status ? 1 : 0,
      portal_payout: b.show_payout ? 1 : 0,
      portal_contacts: b.show_contacts ? 1 : 0,
      ftd_hold_hours: b.ftd_hold_hours,
      sale_status_map: JSON.stringify(map),
      updated_at: nowIso(),
    });
    await audit(tx, actor, {
      action: 'traffic_provider.portal_updated',
      target_type: 'traffic_provider',
      target_id: id,
      details: { name: current.name, before, after: { ...b, sale_status_map: map } },
    });
  });
  return getProviderPortal(db, actor, id);
}
