import { Type } from 'typebox';
import { ACTION_DESCRIPTIONS, ALL_PERMISSIONS, MODULES } from '../../auth/permissions.js';
import type { App } from '../../types.js';

const Vocabulary = Type.Object(
  {
    permissions: Type.Array(Type.String(), { description: 'Every module:action string' }),
    modules: Type.Array(
      Type.Object({
        module: Type.String(),
        label: Type.String(),
        actions: Type.Array(
          Type.Object({ action: Type.String(), permission: Type.String(), description: Type.String() }),
        ),
      }),
    ),
  },
  { title: 'PermissionVocabulary' },
);

const vocabulary = {
  permissions: ALL_PERMISSIONS,
  modules: Object.entries(MODULES).map(([module, def]) => ({
    module,
    label: def.label,
    actions: def.actions.map((action) => ({
      action,
      permission: `${module}:${action}`,
      description: `${ACTION_DESCRIPTIONS[action]} ${def.label.toLowerCase()}`,
    })),
  })),
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
    async () => vocabulary,
  );
}
