// The Analytics screen's date presets, its URL form and its day × entity chart lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { breakdown, formToParams, MEASURES, parseForm, presetRange, dayIn, type Row } from './report';

test('presets are whole days ending today, across month and year ends', () => {
  assert.deepEqual(presetRange('today', '2026-03-01'), { date_from: '2026-03-01', date_to: '2026-03-01' });
  assert.deepEqual(presetRange('yesterday', '2026-03-01'), { date_from: '2026-02-28', date_to: '2026-02-28' });
  assert.deepEqual(presetRange('last7', '2026-03-03'), { date_from: '2026-02-25', date_to: '2026-03-03' });
  assert.deepEqual(presetRange('last30', '2026-01-10'), { date_from: '2025-12-12', date_to: '2026-01-10' });
  assert.deepEqual(presetRange('this_month', '2026-11-25'), { date_from: '2026-11-01', date_to: '2026-11-25' });
  assert.deepEqual(presetRange('last_month', '2026-01-15'), { date_from: '2025-12-01', date_to: '2025-12-31' });
  assert.deepEqual(presetRange('last_month', '2024-03-31'), { date_from: '2024-02-01', date_to: '2024-02-29' });
});

test("today is the operator's day, not the machine's", () => {
  const now = new Date('2026-11-25T23:30:00Z');
  assert.equal(dayIn('UTC', now), '2026-11-25');
  assert.equal(dayIn('Europe/Berlin', now), '2026-11-26');
  assert.equal(dayIn('America/New_York', now), '2026-11-25');
});

const measures = {
  rejected: 0,
  duplicates: 0,
  failed: 0,
  conversion_rate: 0,
  flagged: 0,
  flagged_rate: 0,
  revenue: 0,
  cost: 0,
  profit: 0,
};
const group = (key: string, leads: number, ftds = 0) => ({
  key,
  label: key,
  leads,
  delivered: leads,
  ftds,
  ...measures,
});

test('a period × entity chart: a line per entity, the smallest folded into "Others", each period adding up', () => {
  const countries = ['DE', 'AT', 'CH', 'FR', 'GB', 'IT', 'ES', 'PL'];
  const rows: Row[] = [1, 2].map((day) => ({
    ...group(`2026-11-0${day}`, 0),
    children: countries.map((c, i) => group(c, (countries.length - i) * day, i === 7 ? 5 : 0)),
  }));
  const { data, series } = breakdown(rows, 'leads');
  assert.deepEqual(
    series.map((s) => s.label),
    ['DE', 'AT', 'CH', 'FR', 'GB', 'IT', 'Others (2)'],
  );
  assert.deepEqual(data[0], { label: '2026-11-01', g0: 8, g1: 7, g2: 6, g3: 5, g4: 4, g5: 3, others: 3 });
  assert.deepEqual(data[1], { label: '2026-11-02', g0: 16, g1: 14, g2: 12, g3: 10, g4: 8, g5: 6, others: 6 });
  // Ranked by the measure shown: by FTDs, PL (the only one with FTDs) comes first.
  assert.equal(breakdown(rows, 'ftds').series[0].label, 'PL');
  // Seven groups or fewer: no "Others".
  assert.equal(
    breakdown([{ ...group('d', 0), children: countries.slice(0, 7).map((c) => group(c, 1)) }], 'leads').series.length,
    7,
  );
});

test('the report zone lives in the URL as timezone=, and is left out when none was picked', () => {
  const form = parseForm(new URLSearchParams('date_from=2026-11-24&timezone=Europe%2FBerlin'));
  assert.equal(form.timezone, 'Europe/Berlin');
  assert.equal(formToParams(form).toString(), 'date_from=2026-11-24&timezone=Europe%2FBerlin');
  assert.equal(parseForm(new URLSearchParams('')).timezone, undefined);
  assert.equal(formToParams({ group_by: 'day' }).has('timezone'), false);
});

test('the Flagged column shows the count and its share of the leads, a plain 0 without flagged leads', () => {
  const flagged = MEASURES.find((c) => c.key === 'flagged')!;
  assert.equal(flagged.label, 'Flagged');
  const m = (n: number, rate: number) => ({ ...group('x', 40), flagged: n, flagged_rate: rate });
  const percent = new Intl.NumberFormat(undefined, {
    style: 'percent',
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  assert.equal(flagged.format(m(3, 0.075), 'USD'), `3 (${percent.format(0.075)})`);
  assert.equal(flagged.format(m(0, 0), 'USD'), '0');
});
