// Audit details about leads can carry a lead's contacts: a partner's postback quoting them in a
// sale status, the search an export was made with, a partner's failing answer quoting the lead
// it was sent (partner.paused, written by a trigger). A reader without leads:contacts gets them
// masked, as in every other answer about leads.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { contactMasker, maskContactLike, maskDeep, maskFreeText, type Masker } from '../../privacy/mask.js';

interface Entry {
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
}

/**
 * Entries about no one lead whose details quote a partner's words (the reason of the failed call
 * that paused it): anything contact-shaped in them goes. Other details (an operator's email in
 * operator.created) are not leads' contacts and stay.
 */
const PARTNER_TEXT: Record<string, string[]> = { 'partner.paused': ['last_reason'] };

/** The export filters that take free text (the others are dates, enums and ids). */
const FREE_TEXT_FILTERS = ['q', 'sale_status', 'sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'];

/**
 * `entries` with the contacts in their details masked: for an entry about one lead, every
 * spelling of that lead's email and phone; for an export, anything contact-shaped in the
 * free-text filters it was made with (they belong to no one lead); for a partner paused, in the
 * partner's answer it quotes.
 */
export async function maskLeadContacts<T extends Entry>(db: Kysely<Database>, entries: T[]): Promise<T[]> {
  const ids = [...new Set(entries.filter((e) => e.target_type === 'lead' && e.target_id).map((e) => e.target_id!))];
  const leads = ids.length
    ? await db.selectFrom('leads').select(['id', 'email', 'phone']).where('id', 'in', ids).execute()
    : [];
  const maskers = new Map<string, Masker>(leads.map((l) => [l.id, contactMasker(l)]));
  return entries.map((e) => {
    if (e.target_type === 'lead' && e.target_id) {
      // A lead is never deleted; were one gone, anything shaped like a contact goes.
      return { ...e, details: maskDeep(e.details, maskers.get(e.target_id) ?? maskContactLike) as T['details'] };
    }
    if (e.action === 'lead.exported' && e.details.filters && typeof e.details.filters === 'object') {
      const filters = { ...(e.details.filters as Record<string, unknown>) };
      for (const k of FREE_TEXT_FILTERS) if (k in filters) filters[k] = maskDeep(filters[k], maskContactLike);
      return { ...e, details: { ...e.details, filters } };
    }
    const quoted = PARTNER_TEXT[e.action]?.filter((k) => k in e.details);
    if (quoted?.length)
      return {
        ...e,
        details: { ...e.details, ...Object.fromEntries(quoted.map((k) => [k, maskDeep(e.details[k], maskFreeText)])) },
      };
    return e;
  });
}
