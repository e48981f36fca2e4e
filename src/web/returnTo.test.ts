// Sign-in returns to the page asked for, and never anywhere else (no open redirect).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { landing, loginPath, returnTarget } from './returnTo.js';

test('a path on this site with its query and fragment is returned to as it was asked for', () => {
  for (const next of [
    '/leads?country=DE&status=delivered',
    '/partners/12',
    '/audit?action=a%2Fb#top',
    '/settings/api',
  ]) {
    assert.equal(returnTarget(next), next);
  }
});

test('anything that is not a single-slash relative path on this origin goes to the Overview', () => {
  for (const next of [
    null,
    '',
    'leads',
    '//evil.example/leads',
    '///evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    ' /leads',
    '/login',
    '/login?next=/leads',
    '/setup',
  ]) {
    assert.equal(returnTarget(next), '/', JSON.stringify(next));
  }
});

test('the login page remembers where the operator was going, except for the Overview and the sign-in pages', () => {
  assert.equal(
    loginPath({ pathname: '/leads', search: '?country=DE&status=delivered', hash: '' }),
    '/login?next=%2Fleads%3Fcountry%3DDE%26status%3Ddelivered',
  );
  assert.equal(loginPath({ pathname: '/', search: '', hash: '' }), '/login');
  assert.equal(loginPath({ pathname: '/login', search: '?next=%2Fleads', hash: '' }), '/login');
  // What loginPath writes, returnTarget reads back unchanged.
  const at = { pathname: '/audit', search: '?action=x', hash: '#row-3' };
  const next = new URLSearchParams(loginPath(at).split('?')[1]).get('next');
  assert.equal(returnTarget(next), '/audit?action=x#row-3');
});

test('a provider user lands in the portal and an operator in the dashboard, whatever the page asked for', () => {
  assert.equal(landing('provider', '/'), '/portal');
  assert.equal(landing('provider', '/leads?country=DE'), '/portal');
  assert.equal(landing('provider', '/portalx'), '/portal');
  assert.equal(landing('provider', '/portal/api-keys'), '/portal/api-keys');
  assert.equal(landing('operator', '/portal/api-keys'), '/');
  assert.equal(landing('operator', '/portal'), '/');
  assert.equal(landing('operator', '/leads?country=DE'), '/leads?country=DE');
});
