import { Type } from 'typebox';
import { ALL_PERMISSIONS, type Permission } from '../../auth/permissions.js';

export const PermissionString = Type.Unsafe<Permission>({
  type: 'string',
  enum: ALL_PERMISSIONS,
  description: 'A module:action permission from GET /api/permissions',
});

export const PermissionList = (minItems = 0, description?: string) =>
  Type.Array(PermissionString, {
    uniqueItems: true,
    minItems,
    maxItems: ALL_PERMISSIONS.length,
    ...(description ? { description } : {}),
  });

const IdList = (what: string) =>
  Type.Union(
    [Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { uniqueItems: true, maxItems: 1000 }), Type.Null()],
    {
      description: `Only the data of these ${what} (their ids); null: all of them`,
    },
  );

export const RoleScope = Type.Object(
  { traffic_provider_ids: IdList('traffic providers'), partner_ids: IdList('partners') },
  {
    additionalProperties: false,
    title: 'RoleScope',
    description:
      "Limits the role's operators (and their API keys) to the leads, reports, events and records of some traffic providers and/or partners. The built-in admin role is never scoped.",
  },
);

export const Role = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    permissions: Type.Array(Type.String()),
    builtin: Type.Boolean({ description: 'The built-in admin role holds every permission and cannot be changed' }),
    scope: RoleScope,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Role' },
);

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 500 });

export const CreateRole = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    permissions: PermissionList(),
    scope: Type.Optional(RoleScope),
  },
  { additionalProperties: false },
);

export const UpdateRole = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    permissions: Type.Optional(PermissionList()),
    scope: Type.Optional(RoleScope),
  },
  { additionalProperties: false, minProperties: 1 },
);

export { IdParams } from '../../http/common-schemas.js';
