import type { Page } from 'playwright-core';

/** The signed-in screens: each route of src/web/App.tsx, editors by their "new" page. */
export const SCREENS = [
  '/',
  '/leads',
  '/leads/injections',
  '/leads/imports',
  '/analytics',
  '/caps',
  '/quality/review',
  '/quality/blocklists',
  '/quality/settings',
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
  '/settings/privacy',
  '/audit',
  '/profile',
];

/** A screen's name in failures and screenshot files: `/settings/api` → `settings-api`. */
export const screenName = (path: string) => (path === '/' ? 'overview' : path.slice(1).replaceAll('/', '-'));

/** What the dialogs open on: records the test made. */
export interface DialogRecords {
  flowId: string;
  providerId: string;
}

/**
 * The drawers and dialogs, each opened from its page (loaded afresh, so each stands alone): the lead
 * drawer and its redeliver dialog (the first lead listed must be rejected or failed), the bell's
 * notifications, the new-key and revoke dialogs (a key must exist), the blocklist's add and bulk-add
 * dialogs, a delete confirmation, the retention confirmation (opened, not confirmed), and the
 * provider's rotate confirmation and its once-shown token (that one rotates the provider's token).
 */
export const DIALOGS: [string, (page: Page, base: string, records: DialogRecords) => Promise<void>][] = [
  [
    'lead-drawer',
    async (page, base) => {
      await page.goto(`${base}/leads`);
      await page.getByTestId('lead-row').first().click();
      await page.getByTestId('lead-drawer').getByTestId('lead-status').waitFor();
    },
  ],
  [
    'redeliver-dialog',
    async (page, base) => {
      await page.goto(`${base}/leads`);
      await page.getByTestId('lead-row').first().click();
      await page.getByTestId('lead-drawer').getByRole('button', { name: 'Redeliver' }).click();
      await page.getByRole('dialog', { name: 'Redeliver lead' }).waitFor();
    },
  ],
  [
    'notifications',
    async (page, base) => {
      await page.goto(`${base}/`);
      await page.getByRole('button', { name: /^Notifications/ }).click();
      await page.getByTestId('notifications').waitFor();
    },
  ],
  [
    'new-key-dialog',
    async (page, base) => {
      await page.goto(`${base}/settings/api`);
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByRole('dialog').waitFor();
    },
  ],
  [
    'revoke-key-dialog',
    async (page, base) => {
      await page.goto(`${base}/settings/api`);
      await page.getByRole('button', { name: 'Revoke' }).first().click();
      await page.getByRole('dialog').waitFor();
    },
  ],
  [
    'rule-dialog',
    async (page, base) => {
      await page.goto(`${base}/leads/injections`);
      await page.getByRole('button', { name: 'New rule' }).click();
      await page.getByRole('dialog', { name: 'New re-injection rule' }).getByTestId('rule-preview-count').waitFor();
    },
  ],
  [
    'blocklist-entry-dialog',
    async (page, base) => {
      await page.goto(`${base}/quality/blocklists`);
      await page.getByRole('button', { name: 'Add entry' }).click();
      await page.getByRole('dialog', { name: 'Add blocklist entry' }).waitFor();
    },
  ],
  [
    'blocklist-bulk-dialog',
    async (page, base) => {
      await page.goto(`${base}/quality/blocklists`);
      await page.getByRole('button', { name: 'Bulk add (CSV)' }).click();
      await page.getByRole('dialog', { name: 'Bulk add (CSV)' }).waitFor();
    },
  ],
  [
    'delete-dialog',
    async (page, base, { flowId }) => {
      await page.goto(`${base}/flows/${flowId}`);
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').waitFor();
    },
  ],
  [
    'retention-confirm-dialog',
    async (page, base) => {
      await page.goto(`${base}/settings/privacy`);
      await page.getByRole('switch', { name: 'Delete leads after' }).dispatchEvent('click');
      await page.getByTestId('retention-save').click();
      await page.getByRole('dialog', { name: 'Apply the new retention?' }).waitFor();
    },
  ],
  [
    'rotate-token-dialog',
    async (page, base, { providerId }) => {
      await page.goto(`${base}/traffic-providers/${providerId}`);
      await page.getByRole('button', { name: 'Rotate token' }).click();
      await page.getByRole('dialog').waitFor();
    },
  ],
  [
    'token-dialog',
    async (page, base, { providerId }) => {
      await page.goto(`${base}/traffic-providers/${providerId}`);
      await page.getByRole('button', { name: 'Rotate token' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate token' }).click();
      await page.getByTestId('provider-token').waitFor();
    },
  ],
];
