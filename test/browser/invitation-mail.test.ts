// Invitations mailed (issue 27) in a real browser: with SMTP_URL set, the operator's invitation
// dialog says "Mailed to …" beside the link (shown once all the same), and "Not mailed: …" with the
// mail server's answer when it refuses the recipient; the Hosting page names the mail server. The SMTP server is a real one on loopback.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startSmtpServer, type SmtpServerOptions } from '../smtp-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  signIn,
  startServerAndClient,
  wideElements,
} from './harness.js';

test('the invitation dialog says whether the link was mailed, beside the link', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const smtpOptions: SmtpServerOptions = {};
  const smtp = await startSmtpServer(t, smtpOptions);
  const { server, client } = await startServerAndClient(t, {
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}?starttls=off`,
    MAIL_FROM: 'Leadgate <noreply@leadgate.test>',
  });
  const base = `http://127.0.0.1:${server.port}`;
  const set = await client.send('PUT', '/api/hosting/public-url', { public_base_url: base });
  assert.equal(set.status, 200, set.text);
  const provider = await client.create('/api/traffic-providers', { name: 'Media Buyers Ltd' });

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('operator-name').waitFor();
  await page.goto(`${base}/traffic-providers/${provider.id}`);
  const panel = page.getByTestId('portal-panel');
  await panel.getByTestId('portal-users-empty').waitFor();
  await panel.getByLabel('Email').fill('affiliate@example.com');
  await panel.getByRole('button', { name: 'Invite' }).click();
  const link = (await page.getByTestId('invitation-link').innerText()).trim();
  assert.match(link, new RegExp(`^${base}/portal/invitation#token=lgi_`));
  assert.equal((await page.getByTestId('invitation-mail').innerText()).trim(), 'Mailed to affiliate@example.com.');
  assert.equal(smtp.messages.length, 1);
  assert.deepEqual(smtp.messages[0].to, ['affiliate@example.com']);
  assert.ok(smtp.messages[0].data.includes(link), 'the mailed link is the one shown');
  await assertAccessible(page, 'invitation mailed');
  await page.getByRole('button', { name: 'Done' }).click();

  // The mail server now refuses the recipient: the renewed link is shown, and why it was not mailed.
  smtpOptions.rcptReply = '550 5.1.1 mailbox unavailable';
  const row = panel.getByTestId('portal-user-row').filter({ hasText: 'affiliate@example.com' });
  await page.setViewportSize({ width: 390, height: 844 });
  await row.getByRole('button', { name: 'Renew invitation' }).click();
  const renewed = (await page.getByTestId('invitation-link').innerText()).trim();
  assert.notEqual(renewed, link);
  assert.equal(
    (await page.getByTestId('invitation-mail').innerText()).trim(),
    'Not mailed: the mail server refused RCPT TO: 550 5.1.1 mailbox unavailable',
  );
  assert.equal(smtp.messages.length, 1);
  await assertAccessible(page, 'invitation not mailed (phone)');
  const { scrollWidth, lines } = await wideElements(page);
  assert.ok(scrollWidth <= 390 && lines.length === 0, `${scrollWidth} px wide\n${lines.join('\n')}`);
  await page.getByRole('button', { name: 'Done' }).click();

  // The Hosting page names the mail server and the sender (never a password: there is none in this URL).
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}/settings/hosting`);
  const mail = page.getByTestId('hosting-mail');
  await mail.waitFor();
  const facts = await mail.innerText();
  assert.ok(facts.includes(`smtp://127.0.0.1:${smtp.port}`), facts);
  assert.ok(facts.includes('Leadgate <noreply@leadgate.test>') && facts.includes('none (plain text)'), facts);
});
