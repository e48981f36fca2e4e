// Two-factor sign-in in a real browser: enrol from the Profile screen (codes computed here from
// the secret the screen shows), recovery codes shown once, sign in again with a code, then sign
// other sessions out from the Sessions table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { totpAt } from '../../src/server/auth/totp.js';
import { ServerClient } from '../processes.js';
import { ADMIN, chromiumAvailable, openBrowser, screenshot, signIn, startServer } from './harness.js';

const sessionId = (token: string) => token.slice(4, 16); // lgs_ + the 12-character lookup id

test('an operator turns on 2FA, signs in with a code and signs other sessions out', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const server = await startServer(t);
  // Two sessions elsewhere, made before 2FA is on (a script login would need a code after).
  const laptop = await new ServerClient(server.port).login();
  const phone = await new ServerClient(server.port).login();
  t.after(() => [laptop, phone].forEach((c) => c.close()));

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('operator-name').waitFor();
  await page.getByRole('link', { name: 'Profile' }).click();
  await page.waitForURL('**/profile');

  // Enrol: QR code and secret, then a code from that secret.
  assert.equal(await page.getByTestId('two-factor-status').textContent(), 'Off');
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  const secret = (await page.getByTestId('totp-secret').innerText()).trim();
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const qr = page.getByTestId('totp-qr');
  assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/svg\+xml;base64,/);
  assert.ok((await qr.boundingBox())!.width >= 150, 'the QR code is shown at a scannable size');

  const codeInput = page.getByLabel('Code from the app');
  await page.evaluate('window.scrollTo(0, 0)'); // full-page shots of a scrolled shell split the header
  await screenshot(page, 'profile-2fa');
  await codeInput.fill('000000' === totpAt(secret, Date.now()) ? '111111' : '000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByText('does not match the secret').waitFor();
  await codeInput.fill(totpAt(secret, Date.now()));
  await page.getByRole('button', { name: 'Turn on' }).click();

  // The recovery codes, once.
  const box = page.getByTestId('recovery-codes');
  await box.waitFor();
  const codes = (await box.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
  assert.equal(codes.length, 10);
  for (const c of codes) assert.match(c, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
  // The status comes from the profile, read again once the codes are shown: waited for, not raced.
  await page.getByTestId('two-factor-status').getByText('On', { exact: true }).waitFor();
  assert.equal(await page.getByTestId('two-factor-status').textContent(), 'On');
  await page.evaluate('window.scrollTo(0, 0)');
  await screenshot(page, 'recovery-codes');
  await page.getByRole('button', { name: 'I have saved them' }).click();
  await page.getByTestId('recovery-left').filter({ hasText: 'Recovery codes left: 10' }).waitFor();
  await page.reload();
  await page.getByTestId('recovery-left').waitFor();
  assert.equal(await page.getByTestId('recovery-codes').count(), 0, 'never shown again');
  assert.ok(!(await page.content()).includes(codes[0]));

  // Sign out, and back in: the password first, then the code.
  await page.getByRole('banner').getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL('**/login');
  await signIn(page, server);
  const code = page.getByLabel('Authentication code');
  await code.waitFor();
  assert.equal(await page.getByLabel('Password').count(), 0, 'the password step is done');
  await page.getByRole('button', { name: 'Use a recovery code' }).click();
  await page.getByLabel('Recovery code').waitFor();
  await page.getByRole('button', { name: 'Use the authenticator app' }).click();
  await code.fill('123');
  await screenshot(page, 'login-2fa');
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByTestId('form-error').waitFor();
  // The next step's code: the current one was spent by the enrolment.
  await code.fill(totpAt(secret, Date.now() + 30_000));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByTestId('operator-name').waitFor();
  const again = await laptop.send('POST', '/api/auth/login', ADMIN, '');
  assert.equal(again.json().code, 'totp_required', 'a password alone no longer signs in');

  // Sessions: this browser, the laptop and the phone. Sign the laptop out, then everywhere else.
  await page.getByRole('link', { name: 'Profile' }).click();
  const table = page.getByTestId('sessions-table');
  await table.locator(`[data-session="${sessionId(phone.token)}"]`).waitFor();
  assert.equal(await table.locator('tbody tr').count(), 3);
  assert.equal(await table.getByText('This session').count(), 1);
  await page.evaluate('window.scrollTo(0, 0)');
  await screenshot(page, 'sessions');

  await table
    .locator(`[data-session="${sessionId(laptop.token)}"]`)
    .getByRole('button', { name: 'Sign out', exact: true })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByTestId('sessions-done').waitFor();
  await table.locator(`[data-session="${sessionId(laptop.token)}"]`).waitFor({ state: 'detached' });
  assert.equal((await laptop.send('GET', '/api/auth/whoami')).status, 401, 'the revoked session is refused');
  assert.equal((await phone.send('GET', '/api/auth/whoami')).status, 200);
  assert.equal(await table.locator('tbody tr').count(), 2);

  await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByTestId('sessions-done').filter({ hasText: 'Signed out 1 other session' }).waitFor();
  await table.locator(`[data-session="${sessionId(phone.token)}"]`).waitFor({ state: 'detached' });
  assert.equal((await phone.send('GET', '/api/auth/whoami')).status, 401);
  assert.equal(await table.locator('tbody tr').count(), 1);
  assert.equal(await page.getByRole('button', { name: 'Sign out everywhere else' }).isDisabled(), true);
  await page.reload();
  await page.getByTestId('two-factor-status').filter({ hasText: 'On' }).waitFor();
});
