import { Type } from 'typebox';
import { clientIp } from '../../auth/guard.js';
import { IpAllowList, parseCidr, readAllowList, writeAllowList } from '../../auth/ip-allowlist.js';
import { conflict, invalid, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';

const SecuritySettings = Type.Object(
  {
    ip_allowlist: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: 500,
      description: 'CIDRs (IPv4 or IPv6; a bare address means that one address). Empty: every address is allowed.',
    }),
  },
  { title: 'SecuritySettings', additionalProperties: false },
);

// The caller's address as the allow-list sees it (after TRUST_PROXY): what a new list must include.
const SecuritySettingsView = Type.Object(
  {
    ...SecuritySettings.properties,
    your_ip: Type.String({
      description: 'Your current address, as the allow-list sees it (behind a trusted proxy: the forwarded one)',
    }),
  },
  { title: 'SecuritySettingsView' },
);

export default async function securityRoutes(app: App) {
  app.get(
    '/api/settings/security',
    {
      config: { sessionOnly: true, permission: 'settings:view' },
      schema: {
        operationId: 'getSecuritySettings',
        tags: ['Security settings'],
        summary: 'The account IP allow-list',
        description:
          'Applies to every dashboard session and API key, and to login itself (not to lead intake or postbacks).',
        response: { 200: SecuritySettingsView },
      },
    },
    async (req) => ({ ip_allowlist: await readAllowList(app.db), your_ip: clientIp(req) }),
  );

  app.put(
    '/api/settings/security',
    {
      config: { sessionOnly: true, permission: 'settings:edit' },
      schema: {
        operationId: 'updateSecuritySettings',
        tags: ['Security settings'],
        summary: 'Replace the account IP allow-list',
        description:
          'A list that would block your own current address is refused with 409, so nobody locks themselves out by mistake.',
        body: SecuritySettings,
        response: { 200: SecuritySettings, ...problems(409) },
      },
    },
    async (req) => {
      const errors: FieldError[] = [];
      const cidrs: string[] = [];
      req.body.ip_allowlist.forEach((entry, i) => {
        const cidr = parseCidr(entry);
        if (!cidr) errors.push({ field: `ip_allowlist[${i}]`, message: `"${entry}" is not an IP address or CIDR` });
        else if (!cidrs.includes(cidr)) cidrs.push(cidr);
      });
      if (errors.length) invalid(errors);
      const ip = clientIp(req);
      if (!new IpAllowList(cidrs).allows(ip)) {
        conflict(`This list does not include your own address ${ip}; saving it would lock you out.`);
      }
      const before = await readAllowList(app.db);
      await app.db.transaction().execute(async (tx) => {
        await writeAllowList(tx, cidrs);
        await audit(tx, req, { action: 'settings.ip_allowlist_updated', details: { before, after: cidrs } });
      });
      return { ip_allowlist: cidrs };
    },
  );
}
