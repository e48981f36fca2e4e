import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { getSecuritySettings, updateSecuritySettings } from './service.js';

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
    async (req) => getSecuritySettings(app.db, actorOf(req)),
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
    async (req) => updateSecuritySettings(app.db, actorOf(req), req.body.ip_allowlist),
  );
}
