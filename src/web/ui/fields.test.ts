// The API's field errors in the words of a form's labels, and cleared input by input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fieldErrors, noErrors } from './fields';

const LABELS = { name: 'Name', allowed_ips: 'Allowed IPs', 'duplicate_policy.window_hours': 'Window (hours)' };

test('each error at its input (longest prefix), labelled as on screen, its part in words', () => {
  const e = fieldErrors(
    [
      { field: 'allowed_ips[1]', message: '"office" is not an IP address or CIDR' },
      { field: 'duplicate_policy.window_hours', message: 'must be at most 8760' },
      { field: 'duplicate_policy.scope', message: 'must be one of: provider, global' },
      { field: 'name', message: 'must not be empty' },
    ],
    LABELS,
    { allowed_ips: 'line' },
  );
  assert.equal(e.at('allowed_ips'), 'Line 2: "office" is not an IP address or CIDR');
  assert.equal(e.at('duplicate_policy.window_hours'), 'must be at most 8760');
  assert.deepEqual(e.summary, [
    'Allowed IPs, line 2: "office" is not an IP address or CIDR',
    'Window (hours): must be at most 8760',
    'Duplicate policy, scope: must be one of: provider, global', // no input claims it: its field in words
    'Name: must not be empty',
  ]);
  assert.ok(!e.summary.some((s) => /[[\]_]/.test(s.split(':')[0])), 'no API spelling in a label');
});

test('without: an edited input loses its messages, the others stay; row.* clears a whole row', () => {
  const e = fieldErrors(
    [
      { field: 'name', message: 'must not be empty' },
      { field: 'allowed_ips[0]', message: 'bad' },
    ],
    LABELS,
  );
  const after = e.without(['name']);
  assert.equal(after.at('name'), undefined);
  assert.equal(after.at('allowed_ips'), 'Item 1: bad');
  assert.deepEqual(after.summary, ['Allowed IPs, item 1: bad']);
  assert.deepEqual(e.without(['allowed*']).summary, ['Name: must not be empty']);
  assert.equal(e.without(['other']).summary.length, 2);
  assert.deepEqual(noErrors.without(['name']).summary, []);
});
