import { IpAllowList, parseCidr, readAllowList, writeAllowList } from '../../auth/ip-allowlist.js';
import type { DB } from '../../db/database.js';
import { conflict, invalid, type FieldError } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { addressOf } from '../auth/service.js';

// The account IP allow-list (auth/ip-allowlist.ts): shown with the caller's address, replaced
// only by a list that still lets the caller in.

export async function getSecuritySettings(db: DB, actor: Actor) {
  return { ip_allowlist: await readAllowList(db), your_ip: addressOf(actor) };
}

/** Each entry a CIDR (400 naming the bad ones), duplicates dropped; 409 when it would lock the caller out. */
export async function updateSecuritySettings(db: DB, actor: Actor, entries: string[]) {
  const errors: FieldError[] = [];
  const cidrs: string[] = [];
  entries.forEach((entry, i) => {
    const cidr = parseCidr(entry);
    if (!cidr) errors.push({ field: `ip_allowlist[${i}]`, message: `"${entry}" is not an IP address or CIDR` });
    else if (!cidrs.includes(cidr)) cidrs.push(cidr);
  });
  if (errors.length) invalid(errors);
  const ip = addressOf(actor);
  if (!new IpAllowList(cidrs).allows(ip)) {
    conflict(`This list does not include your own address ${ip}; saving it would lock you out.`);
  }
  const before = await readAllowList(db);
  await db.transaction().execute(async (tx) => {
    await writeAllowList(tx, cidrs);
    await audit(tx, actor, { action: 'settings.ip_allowlist_updated', details: { before, after: cidrs } });
  });
  return { ip_allowlist: cidrs };
}
