// The licence panel in a real browser, against a server that trusts a test vendor key: a forged
// key is refused with the server's reason, a key bound to this installation is installed and
// shown as valid, and one near expiry shows the yellow warning.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { signLicence, type LicencePayload } from '../../src/server/modules/licence/format.js';
import { apiGet, chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

const DAY = 86_400_000;
const vendor = generateKeyPairSync('ed25519');

const licence = (over: Partial<LicencePayload>) =>
  signLicence(
    {
      v: 1,
      licence_id: randomUUID(),
      holder: 'Acme GmbH',
      plan: 'business',
      limits: { operators: 25, leads_per_month: 100_000 },
      issued_at: new Date(Date.now() - DAY).toISOString(),
      expires_at: new Date(Date.now() + 400 * DAY).toISOString(),
      ...over,
    },
    vendor.privateKey,
  );

test('an admin installs a licence key in the panel and sees it valid', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t, {
    LICENCE_PUBLIC_KEY: vendor.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  });

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByRole('link', { name: 'Licence' }).click();
  await page.waitForURL('**/settings/licence');
  assert.match(await page.getByTestId('licence-status').innerText(), /^community$/i);
  await page.getByTestId('licence-community').waitFor();
  const installationId = (await page.getByTestId('installation-id').innerText()).trim();
  assert.equal(installationId, (await apiGet(server, '/api/licence', client.token)).json().installation_id);

  const keyInput = page.getByLabel('Licence key');
  const install = page.getByRole('button', { name: 'Install' });

  // A forged key (the plan raised after signing): the server's reason is shown, nothing changes.
  const [prefix, payload, signature] = licence({}).split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  await keyInput.fill(
    `${prefix}.${Buffer.from(JSON.stringify({ ...claims, plan: 'enterprise' })).toString('base64url')}.${signature}`,
  );
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/licence') && r.request().method() === 'PUT'),
    install.click(),
  ]);
  assert.equal(refused.status(), 400);
  assert.match(await page.getByTestId('licence-error').innerText(), new RegExp(escape((await refused.json()).detail)));
  assert.match(await page.getByTestId('licence-status').innerText(), /community/i);

  // A key bound to this installation, pasted wrapped over lines: installed and shown as valid.
  const key = licence({ installation_id: installationId, licence_id: 'LIC-2026-0042' });
  await keyInput.fill(key.match(/.{1,64}/g)!.join('\n'));
  await install.click();
  await page.getByTestId('licence-installed').waitFor();
  assert.match(await page.getByTestId('licence-status').innerText(), /^valid$/i);
  assert.equal(await page.getByTestId('licence-holder').innerText(), 'Acme GmbH');
  assert.equal(await page.getByTestId('licence-plan').innerText(), 'business');
  assert.match(await page.getByTestId('licence-limits').innerText(), /operators: 25, leads per month: 100[,.\s]?000/);
  assert.match(await page.getByTestId('licence-expires').innerText(), /\(400 days left\)/);
  assert.equal(await page.getByTestId('licence-bound-to').innerText(), installationId);
  assert.equal(await page.getByTestId('licence-warning').count(), 0);
  const stored = (await apiGet(server, '/api/licence', client.token)).json();
  assert.equal(stored.status, 'valid');
  assert.equal(stored.licence.licence_id, 'LIC-2026-0042');
  await screenshot(page, 'licence');

  // A renewal that runs out within 30 days: installed, with the yellow warning.
  await keyInput.fill(licence({ expires_at: new Date(Date.now() + 9 * DAY).toISOString() }));
  await install.click();
  await page.getByTestId('licence-warning').waitFor();
  assert.match(await page.getByTestId('licence-status').innerText(), /expiring soon/i);
  assert.match(await page.getByTestId('licence-warning').innerText(), /expires in 9 days/);
  await screenshot(page, 'licence-expiring');
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
