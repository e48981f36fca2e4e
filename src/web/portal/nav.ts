// The portal's menu: the provider's own pages, under /portal.
export const PORTAL_LINKS = [
  { to: '/portal', label: 'Overview' },
  { to: '/portal/leads', label: 'Leads' },
  { to: '/portal/stats', label: 'Stats' },
  { to: '/portal/campaigns', label: 'Campaigns' },
  { to: '/portal/postbacks', label: 'Postbacks' },
  { to: '/portal/history', label: 'History' },
  { to: '/portal/api-keys', label: 'API keys' },
  { to: '/portal/profile', label: 'Profile' },
];

/** A link is active on its own page and the pages under it ("/portal" only on itself). */
export const portalActive = (to: string, path: string) =>
  path === to || (to !== '/portal' && path.startsWith(`${to}/`));

/** The browser tab's title: the page's menu label, "· Portal · Leadgate". */
export function portalTitle(path: string): string {
  const link = PORTAL_LINKS.find((l) => portalActive(l.to, path));
  return `${link ? `${link.label} · ` : ''}Portal · Leadgate`;
}
