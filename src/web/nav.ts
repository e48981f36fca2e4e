// The menu, in sections. A link with a `permission` is hidden from operators who lack it, and a
// section with no link left is hidden; the Overview's welcome offers the same links.
export interface NavItem {
  to: string;
  label: string;
  permission?: string;
  /** Shown only to admins (the licence panel needs the admin role, not a permission). */
  adminOnly?: boolean;
}
export const SECTIONS: { title: string | null; links: NavItem[] }[] = [
  {
    title: null,
    links: [
      { to: '/', label: 'Overview', permission: 'analytics:view' },
      { to: '/leads', label: 'Leads', permission: 'leads:view' },
      { to: '/leads/injections', label: 'Re-injection', permission: 'leads:edit' },
      { to: '/leads/imports', label: 'Import', permission: 'leads:edit' },
      { to: '/analytics', label: 'Analytics', permission: 'analytics:view' },
    ],
  },
  {
    title: 'Routing',
    links: [
      { to: '/flows', label: 'Flows', permission: 'flows:view' },
      { to: '/caps', label: 'Cap usage', permission: 'flows:view' },
      { to: '/partners', label: 'Partners', permission: 'partners:view' },
      { to: '/campaigns', label: 'Campaigns', permission: 'campaigns:view' },
      { to: '/traffic-providers', label: 'Traffic providers', permission: 'traffic_providers:view' },
    ],
  },
  {
    title: 'Quality',
    links: [
      { to: '/quality/review', label: 'Review queue', permission: 'leads:view' },
      { to: '/quality/blocklists', label: 'Blocklists', permission: 'quality:view' },
      { to: '/quality/settings', label: 'Flag weights', permission: 'quality:view' },
    ],
  },
  {
    title: 'Settings',
    links: [
      { to: '/settings/api', label: 'API keys' },
      { to: '/settings/operators', label: 'Operators', permission: 'operators:view' },
      { to: '/settings/roles', label: 'Roles', permission: 'roles:view' },
      { to: '/settings/security', label: 'Security', permission: 'settings:view' },
      { to: '/settings/hosting', label: 'Hosting', permission: 'hosting:view' },
      { to: '/settings/webhooks', label: 'Webhooks', permission: 'webhooks:view' },
      { to: '/audit', label: 'Audit log', permission: 'audit:view' },
      { to: '/settings/licence', label: 'Licence', adminOnly: true },
      { to: '/settings/privacy', label: 'Privacy', adminOnly: true },
      { to: '/profile', label: 'Profile' },
    ],
  },
];

/** The links an operator with these permissions may open. */
export const visible = (links: NavItem[], permissions: string[], admin = false) =>
  links.filter((l) => (!l.permission || permissions.includes(l.permission)) && (!l.adminOnly || admin));

const under = (to: string, path: string) => path === to || (to !== '/' && path.startsWith(`${to}/`));

/**
 * A link is active on its own page and on the pages under it (`/flows/123` lights "Flows"), unless
 * a link deeper down names that page itself (`/leads/injections` lights "Re-injection", not "Leads").
 */
export const isActive = (to: string, path: string) =>
  under(to, path) &&
  !SECTIONS.some((s) => s.links.some((l) => l.to.length > to.length && l.to.startsWith(to) && under(l.to, path)));

/** The browser tab's title for a page: its menu entry's label (an editor takes its list's), "· Leadgate". */
export function pageTitle(path: string): string {
  const link = SECTIONS.flatMap((s) => s.links).find((l) => isActive(l.to, path));
  return link ? `${link.label} · Leadgate` : 'Leadgate';
}
