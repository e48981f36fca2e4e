import { Type } from 'typebox';
import { ACTION_DESCRIPTIONS, ALL_PERMISSIONS, MODULES } from '../../auth/permissions.js';
import type { App, RouteInfo } from '../../types.js';

const Vocabulary = Type.Object(
  {
    permissions: Type.Array(Type.String(), { description: 'Every module:action string' }),
    modules: Type.Array(
      Type.Object({
        module: Type.String(),
        label: Type.String(),
        actions: Type.Array(
          Type.Object({
            action: Type.String(),
            permission: Type.String(),
            description: Type.String(),
            key_usable: Type.Boolean({
              description:
                'false: every route that needs it is for a signed-in person only (e.g. the IP allow-list), so a key scope of it grants nothing',
            }),
          }),
        ),
      }),
    ),
  },
  { title: 'PermissionVocabulary' },
);

/**
 * The vocabulary. A key cannot use a permission whose every route is session-only (the allow-list,
 * hosting); one no route declares (leads:contacts) refines what key-reachable routes show.
 */
const vocabularyOf = (routes: RouteInfo[]) => {
  const declared = (p: string) => routes.filter((r) => r.access.permission === p);
  const personOnly = (p: string) => declared(p).length > 0 && declared(p).every((r) => r.access.sessionOnly);
  return {
    permissions: ALL_PERMISSIONS,
    modules: Object.entries(MODULES).map(([module, def]) => ({
      module,
      label: def.label,
      actions: def.actions.map((action) => ({
        action,
        permission: `${module}:${action}`,
        description: `${ACTION_DESCRIPTIONS[action]} ${def.label.toLowerCase()}`,
        key_usable: !personOnly(`${module}:${action}`),
      })),
    })),
  };
};

export default async function permissionRoutes(app: App) {
  app.get(
    '/api/permissions',
    {
      config: { authenticated: true },
      schema: {
        operationId: 'listPermissions',
        tags: ['Roles'],
        summary: 'The permission vocabulary: every module:action used by roles and API-key scopes',
        response: { 200: Vocabulary },
      },
    },
    async () => vocabularyOf(app.routeTable),
  );
}
