import net from 'node:net';
import type { DB } from '../db/database.js';
import { readSetting, writeSetting } from '../db/settings.js';

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is the IPv4 address 1.2.3.4. */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1] : ip;
}

/**
 * Parses "10.0.0.0/8", "2001:db8::/32" or a bare address (a /32 or /128) into canonical
 * "address/prefix" form, or null when it is not one.
 */
export function parseCidr(input: string): string | null {
  const [addrRaw, prefixRaw, ...rest] = input.trim().split('/');
  if (rest.length || !addrRaw) return null;
  const addr = normalizeIp(addrRaw);
  const family = net.isIP(addr);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  if (prefixRaw !== undefined && !/^\d{1,3}$/.test(prefixRaw)) return null;
  const prefix = prefixRaw === undefined ? max : Number(prefixRaw);
  if (prefix > max) return null;
  return `${family === 6 ? addr.toLowerCase() : addr}/${prefix}`;
}

export class IpAllowList {
  private readonly list = new net.BlockList();
  readonly empty: boolean;

  constructor(cidrs: string[]) {
    this.empty = cidrs.length === 0;
    for (const c of cidrs) {
      const [addr, prefix] = c.split('/');
      this.list.addSubnet(addr, Number(prefix), net.isIP(addr) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  allows(ip: string): boolean {
    if (this.empty) return true;
    const addr = normalizeIp(ip);
    const family = net.isIP(addr);
    if (family === 0) return false;
    return this.list.check(addr, family === 6 ? 'ipv6' : 'ipv4');
  }
}

const SETTING_KEY = 'ip_allowlist';

export const readAllowList = (db: DB) => readSetting<string[]>(db, SETTING_KEY, []);

export const writeAllowList = (db: DB, cidrs: string[]) => writeSetting(db, SETTING_KEY, cidrs);
