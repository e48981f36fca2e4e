// The permission vocabulary: `module:action`. Role permissions and API-key scopes use the same
// strings. Defined once here; GET /api/permissions serves it; the built-in admin role holds all.

export const MODULES = {
  // leads:contacts shows email and phone unmasked; without it they are masked.
  leads: { label: 'Leads', actions: ['view', 'edit', 'contacts'] },
  flows: { label: 'Flows', actions: ['view', 'edit'] },
  partners: { label: 'Partners', actions: ['view', 'edit'] },
  campaigns: { label: 'Campaigns', actions: ['view', 'edit'] },
  traffic_providers: { label: 'Traffic providers', actions: ['view', 'edit'] },
  analytics: { label: 'Analytics', actions: ['view'] },
  operators: { label: 'Operators', actions: ['view', 'edit'] },
  roles: { label: 'Roles', actions: ['view', 'edit'] },
  audit: { label: 'Audit log', actions: ['view'] },
  settings: { label: 'Security settings', actions: ['view', 'edit'] },
  // Server facts, the public base URL and SQLite backups (session only).
  hosting: { label: 'Hosting', actions: ['view', 'edit'] },
  webhooks: { label: 'Webhooks', actions: ['view', 'edit'] },
  // Lead quality: blocklists (and, to come, fraud flags and the review queue).
  quality: { label: 'Lead quality', actions: ['view', 'edit'] },
} as const satisfies Record<string, { label: string; actions: readonly string[] }>;

export type Module = keyof typeof MODULES;
export type Permission = {
  [M in Module]: `${M}:${(typeof MODULES)[M]['actions'][number]}`;
}[Module];

export const ACTION_DESCRIPTIONS: Record<string, string> = {
  view: 'read',
  edit: 'create, update and delete',
  contacts: 'see unmasked email and phone of',
};

export const ALL_PERMISSIONS: Permission[] = Object.entries(MODULES).flatMap(([module, def]) =>
  def.actions.map((action) => `${module}:${action}` as Permission),
);

const known = new Set<string>(ALL_PERMISSIONS);
export const isPermission = (p: string): p is Permission => known.has(p);

/** Write actions; a route for a write method must require one of these. */
export const isWriteAction = (p: string) => p.endsWith(':edit');

export const ADMIN_ROLE_NAME = 'admin';
