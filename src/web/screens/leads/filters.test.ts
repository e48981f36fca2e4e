// The Leads screen's URL ⇄ filter mapping, sorting by a date column, and the folded-filter count.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countActive, countMore, filtersToParams, parseFilters, sortBy } from './filters';

test('the sort order round-trips through the URL, only when it is not the default', () => {
  assert.deepEqual(parseFilters(new URLSearchParams('order=asc&date_type=ftd')), { order: 'asc', date_type: 'ftd' });
  assert.deepEqual(parseFilters(new URLSearchParams('order=sideways')), {});
  assert.equal(filtersToParams({ order: 'desc', country: ['DE'] }).toString(), 'country=DE');
  assert.equal(filtersToParams({ order: 'asc' }).toString(), 'order=asc');
});

test('a date header sorts by its date newest first; a second click reverses, a third restores', () => {
  const byDelivery = sortBy({ status: ['delivered'] }, 'delivered');
  assert.deepEqual(byDelivery, { status: ['delivered'], date_type: 'delivered' });
  const reversed = sortBy(byDelivery, 'delivered');
  assert.equal(reversed.order, 'asc');
  assert.equal(sortBy(reversed, 'delivered').order, undefined);
  // Another column starts newest first again.
  assert.deepEqual(sortBy(reversed, 'registration'), { status: ['delivered'], date_type: 'registration' });
  // Registration is the default: its first click reverses.
  assert.equal(sortBy({}, 'registration').order, 'asc');
});

test('the order is not a filter; the folded filters are counted', () => {
  assert.equal(countActive({ order: 'asc' }), 0);
  assert.equal(countActive({ order: 'asc', country: ['DE', 'AT'], q: 'Ada' }), 3);
  assert.equal(countMore({ country: ['DE'], q: 'Ada', partner_id: 'p' }), 0);
  assert.equal(countMore({ date_type: 'ftd', sale_status: 'FTD', sub_id3: 'x', is_ftd: false, flow_id: 'f' }), 5);
  assert.equal(countMore({ date_type: 'registration' }), 0);
  assert.equal(countMore({ autologin_opened: false }), 1);
  assert.equal(countMore({ reinjected: false }), 1);
});

test('the autologin filter survives the URL: opened, not opened, anything else dropped', () => {
  for (const v of [true, false]) {
    const params = filtersToParams({ autologin_opened: v });
    assert.equal(params.get('autologin_opened'), String(v));
    assert.deepEqual(parseFilters(params), { autologin_opened: v });
  }
  assert.deepEqual(parseFilters(new URLSearchParams('autologin_opened=maybe')), {});
});

test('the re-injection filter survives the URL: re-injected, fresh only, anything else dropped', () => {
  for (const v of [true, false]) {
    const params = filtersToParams({ reinjected: v });
    assert.equal(params.get('reinjected'), String(v));
    assert.deepEqual(parseFilters(params), { reinjected: v });
  }
  assert.deepEqual(parseFilters(new URLSearchParams('reinjected=1')), {});
});

test('the quality filters survive the URL: known flags (any of), flagged or not, a maximum score', () => {
  const f = parseFilters(
    new URLSearchParams('flag=phone_country,disposable_email&flag=no_such&flagged=true&max_score=70'),
  );
  assert.deepEqual(f, { flag: ['phone_country', 'disposable_email'], flagged: true, max_score: 70 });
  assert.equal(filtersToParams(f).toString(), 'flag=phone_country&flag=disposable_email&flagged=true&max_score=70');
  assert.deepEqual(parseFilters(filtersToParams({ flagged: false, max_score: 0 })), { flagged: false, max_score: 0 });
  // Not a whole number: dropped; past 100 is passed on for the API to name.
  assert.deepEqual(parseFilters(new URLSearchParams('max_score=abc&flagged=yes')), {});
  assert.deepEqual(parseFilters(new URLSearchParams('max_score=150')), { max_score: 150 });
  assert.equal(countMore({ flag: ['ip_country'], flagged: true, max_score: 50 }), 3);
  assert.equal(countMore({ flag: [] }), 0);
});
