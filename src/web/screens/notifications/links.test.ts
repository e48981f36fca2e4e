// A notification opens what it is about.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notificationLink } from './links.js';

const note = (type: string, over: Record<string, unknown> = {}) => ({
  type,
  partner_id: null,
  traffic_provider_id: null,
  data: {},
  ...over,
});

test('a failing partner opens that partner, a cap alert the cap usage, a silent provider and a disabled webhook their editors', () => {
  assert.equal(notificationLink(note('partner.failing', { partner_id: 'p1' })), '/partners/p1');
  assert.equal(notificationLink(note('partner.pull_failed', { partner_id: 'p2' })), '/partners/p2');
  assert.equal(notificationLink(note('partner.cap_full', { partner_id: 'p1' })), '/caps');
  assert.equal(notificationLink(note('partner.cap_nearly_full', { partner_id: 'p1' })), '/caps');
  assert.equal(
    notificationLink(note('traffic_provider.silent', { traffic_provider_id: 't1' })),
    '/traffic-providers/t1',
  );
  assert.equal(notificationLink(note('webhook.disabled', { data: { webhook_id: 'w1' } })), '/settings/webhooks/w1');
  assert.equal(notificationLink(note('webhook.disabled')), null, 'nothing to open without its id');
});
