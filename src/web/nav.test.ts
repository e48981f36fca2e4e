// Each screen's browser-tab title comes from the menu, so a new screen gets one with its link.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isActive, pageTitle } from './nav.js';

test('a screen is titled by its menu entry, an editor by its list, anything else "Leadgate"', () => {
  assert.equal(pageTitle('/'), 'Overview · Leadgate');
  assert.equal(pageTitle('/leads'), 'Leads · Leadgate');
  assert.equal(pageTitle('/partners/new'), 'Partners · Leadgate');
  assert.equal(pageTitle('/settings/operators/42'), 'Operators · Leadgate');
  assert.equal(pageTitle('/traffic-providers/7'), 'Traffic providers · Leadgate');
  assert.equal(pageTitle('/quality/settings'), 'Flag weights · Leadgate');
  assert.equal(pageTitle('/no-such-page'), 'Leadgate');
});

test('a menu link lights on its page and the pages under it, the Overview only on itself', () => {
  assert.ok(isActive('/flows', '/flows/12'));
  assert.ok(!isActive('/flows', '/flowsx'));
  assert.ok(isActive('/', '/'));
  assert.ok(!isActive('/', '/leads'));
  // A deeper link takes its own pages from the one above it.
  assert.ok(isActive('/leads/injections', '/leads/injections'));
  assert.ok(!isActive('/leads', '/leads/injections'));
  assert.equal(pageTitle('/leads/injections'), 'Re-injection · Leadgate');
});
