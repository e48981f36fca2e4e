// Helpers of the CSV import tests (src/server/modules/imports): a provider and campaign to import
// to, files built row by row, the upload and its background work driven by hand.
import assert from 'node:assert/strict';
import { createImportInjection } from '../src/server/modules/injections/service.js';
import { ImportWorker } from '../src/server/modules/imports/worker.js';
import { insertCampaign, insertFlow, insertTrafficProvider } from './fixtures.js';
import { call, type TestApp } from './helpers.js';

export const HEADER = 'First Name,Last Name,E-Mail,Phone,Country,IP,sub1';
export const MAPPING = {
  first_name: 'First Name',
  last_name: 'Last Name',
  email: 'E-Mail',
  phone: 'Phone',
  country: 'Country',
  ip: 'IP',
  sub_id1: 'sub1',
};

/** A good row: a German lead with a unique email and phone. */
export const goodRow = (n: number) =>
  `Ann${n},Lee,ann${n}@example.com,+49 151 ${String(2000000 + n).padStart(8, '0')},DE,10.0.${Math.floor(n / 250)}.${n % 250},s${n}`;

export async function importTarget(ta: TestApp) {
  const providerId = await insertTrafficProvider(ta.db);
  const flowId = await insertFlow(ta.db);
  const campaignId = await insertCampaign(ta.db, providerId, flowId);
  return { providerId, campaignId, flowId };
}

export const upload = (ta: TestApp, csv: string | Buffer, token: string | null = ta.ownerToken, name = 'leads.csv') =>
  call(ta.app, token, {
    method: 'POST',
    url: `/api/imports?name=${encodeURIComponent(name)}`,
    headers: { 'content-type': 'text/csv' },
    payload: csv,
  });

export async function uploaded(ta: TestApp, csv: string) {
  const res = await upload(ta, csv);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export const post = (ta: TestApp, url: string, payload?: object, token: string | null = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url, ...(payload ? { payload } : {}) });

export const get = async (ta: TestApp, url: string, token = ta.ownerToken) => {
  const res = await call(ta.app, token, { method: 'GET', url });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};

/** A worker on the test's app (what the imports job runs), creating injections as app.ts wires it. */
export function worker(ta: TestApp, holder?: string, budgetMs?: number) {
  return new ImportWorker({
    db: ta.db,
    log: ta.app.log,
    holder,
    budgetMs,
    createInjection: (tx, imp) =>
      createImportInjection(tx, { id: imp.id, createdBy: imp.created_by, route: JSON.parse(imp.route!) }),
  });
}

/** Ticks until the import leaves `state`. */
export async function workUntilNot(ta: TestApp, id: string, state: string, w = worker(ta)) {
  for (let i = 0; i < 200; i++) {
    const imp = await get(ta, `/api/imports/${id}`);
    if (imp.state !== state) return imp;
    await w.tick();
  }
  assert.fail(`import ${id} stayed ${state}`);
}

/** Every page of an import's errors. */
export async function allErrors(ta: TestApp, id: string, token = ta.ownerToken) {
  const out: { row: number; field: string; column: string | null; reason: string; value: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const page = await get(ta, `/api/imports/${id}/errors?limit=3${cursor ? `&cursor=${cursor}` : ''}`, token);
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}
