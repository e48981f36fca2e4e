import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CsvError, CsvReader } from './csv-reader.js';

// The streaming CSV reader: RFC 4180 quoting, line ends, BOM, delimiter, and files that are not CSV.

/** Reads `text` fed in pieces of `size` bytes (every split point is tried by the callers). */
function read(input: string | Uint8Array, size = 1 << 20) {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const r = new CsvReader();
  const rows: string[][] = [];
  for (let i = 0; i < bytes.length; i += size) rows.push(...r.push(bytes.subarray(i, i + size)));
  rows.push(...r.end());
  return { columns: r.columns, rows, count: r.rows };
}

function refused(input: string | Uint8Array): CsvError {
  try {
    read(input);
  } catch (err) {
    assert.ok(err instanceof CsvError, String(err));
    return err;
  }
  assert.fail('read without an error');
}

test('quotes, doubled quotes, line ends inside quotes, CRLF and LF, a trailing line end', () => {
  const text = 'name,note\r\n"Doe, Jane","said ""hi""\r\nthen left"\r\nBob,plain\nAmy,""\n';
  const want = [
    ['Doe, Jane', 'said "hi"\r\nthen left'],
    ['Bob', 'plain'],
    ['Amy', ''],
  ];
  for (const size of [1, 2, 3, 5, 7, 1 << 20]) {
    const r = read(text, size);
    assert.deepEqual(r.columns, ['name', 'note'], `size ${size}`);
    assert.deepEqual(r.rows, want, `size ${size}`);
  }
});

test('a BOM is dropped; ";" is the delimiter when the header holds more of it; multi-byte UTF-8 split anywhere', () => {
  const text = '\uFEFFVorname;E-Mail;Ort\nJürgen;j@example.com;"Köln; Innenstadt"\nZoë;z@example.com;Graz';
  for (const size of [1, 2, 1 << 20]) {
    const r = read(text, size);
    assert.deepEqual(r.columns, ['Vorname', 'E-Mail', 'Ort']);
    assert.deepEqual(r.rows, [
      ['Jürgen', 'j@example.com', 'Köln; Innenstadt'],
      ['Zoë', 'z@example.com', 'Graz'],
    ]);
  }
  assert.deepEqual(read('a,b;c\n1,2;3').rows, [['1', '2;3']], 'more commas: comma');
});

test('blank lines are no rows; fewer cells than the header are kept as they are; a quoted empty row is a row', () => {
  const r = read('a,b\n\n1,2\n\n3\n""\n');
  assert.deepEqual(r.rows, [['1', '2'], ['3'], ['']]);
  assert.equal(r.count, 3);
});

test('not CSV: named with the row', () => {
  assert.match(refused('').message, /no header/);
  assert.match(refused('\n\n').message, /no header/);
  const nul = refused('a,b\n1,2\nx\0y,2\n');
  assert.deepEqual([nul.row, /NUL/.test(nul.message)], [2, true]);
  const notUtf8 = refused(Uint8Array.from([0x61, 0x0a, 0x31, 0x0a, 0x32, 0xff, 0xfe, 0x0a]));
  assert.deepEqual([notUtf8.row, /UTF-8/.test(notUtf8.message)], [2, true]);
  assert.match(refused(Uint8Array.from([0x61, 0x0a, 0x62, 0xc3])).message, /UTF-8/);
  const open = refused('a,b\n1,2\n3,"never closed\n4,5\n');
  assert.deepEqual([open.row, /unterminated/.test(open.message)], [2, true]);
  const wide = refused('a,b\n1,2\n3,4\n5,6,7\n');
  assert.deepEqual([wide.row, wide.message], [3, "has 3 cells, more than the header's 2"]);
  assert.match(refused('a,A\n1,2').message, /"A" appears twice/);
  const empty = refused('a,,c\n1,2,3');
  assert.deepEqual([empty.row, empty.message], [0, 'header: column 2 has no name']);
});
