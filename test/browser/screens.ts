/** The signed-in screens: each route of src/web/App.tsx, editors by their "new" page. */
export const SCREENS = [
  '/',
  '/leads',
  '/analytics',
  '/caps',
  '/flows',
  '/flows/new',
  '/partners',
  '/partners/new',
  '/campaigns',
  '/campaigns/new',
  '/traffic-providers',
  '/traffic-providers/new',
  '/settings/api',
  '/settings/webhooks',
  '/settings/webhooks/new',
  '/settings/operators',
  '/settings/operators/new',
  '/settings/roles',
  '/settings/roles/new',
  '/settings/security',
  '/settings/hosting',
  '/settings/licence',
  '/audit',
  '/profile',
];

/** A screen's name in failures and screenshot files: `/settings/api` → `settings-api`. */
export const screenName = (path: string) => (path === '/' ? 'overview' : path.slice(1).replaceAll('/', '-'));
