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

export const Role = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    permissions: Type.Array(Type.String()),
    builtin: Type.Boolean({ description: 'The built-in admin role holds every permission and cannot be changed' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'Role' },
);

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 500 });

export const CreateRole = Type.Object(
  { name: Name, description: Type.Optional(Description), permissions: PermissionList() },
  { additionalProperties: false },
);

export const UpdateRole = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), permissions: Type.Optional(PermissionList()) },
  { additionalProperties: false, minProperties: 1 },
);

export { IdParams } from '../../http/common-schemas.js';
