import type { FastifyBaseLogger } from 'fastify';
import { StringDecoder } from 'node:string_decoder';
import type { Agent } from 'undici';
import { isPostgres, type DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { exchange, type OutboundRequest } from '../../outbound/exchange.js';
import { compilePath, nestsDeeperThan } from '../../distribution/template.js';
import { emitEvent } from '../../events/emit.js';
import { audit, SYSTEM } from '../audit/service.js';
import { applyConversion, CONVERSION_LEAD_COLUMNS, type Conversion } from '../conversions/apply.js';
import type { PullRun, StoredStatusPull } from './schemas.js';

// One run of a partner's status pull: ask its API for the statuses of the window, page by page,
// then apply what changed to the leads delivered to it, exactly as a postback would (one FTD per
// lead, the first reported wins; the source recorded as 'pull'). A dry run applies nothing: its
// changes are made in a transaction that is rolled back, so it shows exactly what a run would do.

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const EXCERPT_BYTES = 2048;
const MAX_UNMATCHED_SHOWN = 50;
/** How deep a body_template may nest: rendering it recurses, and so does JSON.stringify. */
export const MAX_BODY_DEPTH = 32;
/** Failed runs in a row before a partner.pull_failed alert. */
export const ALERT_AFTER_FAILURES = 3;

class DryRun extends Error {}

interface Item {
  partner_lead_id: string;
  word: string | null;
  conversion: Conversion;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y']);
const FALSE_WORDS = new Set(['', 'false', '0', 'no', 'n', 'null']);
const normal = (word: string) => word.trim().toLowerCase();

function formatDate(ms: number, format: StoredStatusPull['date_format']): string {
  const iso = new Date(ms).toISOString();
  if (format === 'date') return iso.slice(0, 10);
  if (format === 'unix') return String(Math.floor(ms / 1000));
  return `${iso.slice(0, 19)}Z`;
}

const PLACEHOLDER = /\{\{(from|to|page|page_size)\}\}/g;

/** The request of one page: placeholders filled (URL-encoded in the URL). */
export function buildPullRequest(
  c: StoredStatusPull,
  vars: Record<'from' | 'to' | 'page' | 'page_size', string>,
): OutboundRequest {
  const fill = (s: string, encode: (v: string) => string) =>
    s.replace(PLACEHOLDER, (_w, name: keyof typeof vars) => encode(vars[name]));
  const render = (v: unknown): unknown => {
    if (typeof v === 'string') return fill(v, (x) => x);
    if (Array.isArray(v)) return v.map(render);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, render(x)]));
    return v;
  };
  const headers: Record<string, string> = { ...c.request_headers };
  let body: string | null = null;
  if (c.method === 'POST') {
    body = JSON.stringify(render(c.body_template ?? {}));
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
  }
  return { method: c.method, url: fill(c.url, encodeURIComponent), headers, body };
}

/** An item's id, status word and what they mean; null when it has no usable id. */
function readItem(c: StoredStatusPull, item: unknown): Item | null {
  const id = compilePath(c.lead_id_path)(item);
  if ((typeof id !== 'string' || id.trim() === '') && typeof id !== 'number') return null;
  const rawWord = c.status_path ? compilePath(c.status_path)(item) : undefined;
  const word = typeof rawWord === 'string' || typeof rawWord === 'number' ? String(rawWord).trim().slice(0, 100) : null;
  const conversion: Conversion = {};
  if (word) {
    const mapped = Object.entries(c.status_map).find(([k]) => normal(k) === normal(word))?.[1];
    conversion.sale_status = mapped?.sale_status ?? word;
    if (mapped?.ftd) conversion.ftd = true;
  }
  if (c.ftd_path) {
    const f = compilePath(c.ftd_path)(item);
    if (f === true || (typeof f === 'number' && f !== 0)) conversion.ftd = true;
    else if (typeof f === 'string' && !FALSE_WORDS.has(normal(f))) {
      if (TRUE_WORDS.has(normal(f))) conversion.ftd = true;
      else {
        const ms = Date.parse(f);
        if (Number.isFinite(ms) && ms > Date.UTC(2000, 0, 1) && ms <= Date.now() + 5 * 60_000) {
          conversion.ftd = true;
          conversion.ftd_at = new Date(ms).toISOString();
        }
      }
    }
  }
  if (c.revenue_path && conversion.ftd) {
    const r = compilePath(c.revenue_path)(item);
    const n =
      typeof r === 'number' ? r : typeof r === 'string' && /^\d{1,9}(\.\d{1,2})?$/.test(r.trim()) ? Number(r) : NaN;
    if (Number.isFinite(n) && n >= 0 && n <= 1_000_000) conversion.revenue_cents = Math.round(n * 100);
  }
  return { partner_lead_id: String(id).trim(), word, conversion };
}

/** Reads every page of the window; stops at the first error (its items so far are kept). */
async function fetchItems(
  agent: Agent,
  c: StoredStatusPull,
  now: number,
): Promise<{ items: Item[]; requests: PullRun['requests']; error: string | null }> {
  const vars = {
    from: formatDate(now - c.lookback_hours * 3600_000, c.date_format),
    to: formatDate(now, c.date_format),
    page: '1',
    page_size: '100',
  };
  const paging = c.paging.type === 'page' ? c.paging : null;
  if (paging) vars.page_size = String(paging.page_size);
  const items: Item[] = [];
  const requests: PullRun['requests'] = [];
  // Saved before the depth was bounded: a failed run that says so, not a stack overflow (a 500,
  // and a scheduled run's lease held until it runs out).
  if (c.body_template && nestsDeeperThan(c.body_template, MAX_BODY_DEPTH)) {
    return {
      items,
      requests,
      error: `body_template nests deeper than ${MAX_BODY_DEPTH} levels: save the status pull again`,
    };
  }
  for (let i = 0; i < (paging?.max_pages ?? 1); i++) {
    if (paging) vars.page = String(paging.first_page + i);
    const req = buildPullRequest(c, vars);
    const res = await exchange(agent, req, {
      timeoutMs: c.timeout_ms,
      maxBytes: MAX_ANSWER_BYTES,
      peer: 'the partner',
    });
    const shown = {
      method: req.method,
      url: req.url,
      http_status: res.answer?.status ?? null,
      items: 0,
      error: null as string | null,
      response_excerpt: res.answer?.raw.length
        ? new StringDecoder('utf8').write(res.answer.raw.subarray(0, EXCERPT_BYTES))
        : null,
    };
    requests.push(shown);
    const fail = (error: string) => {
      shown.error = error;
      return { items, requests, error };
    };
    if (res.failure) return fail(res.failure.reason);
    if (res.answer.status < 200 || res.answer.status > 299) return fail(`HTTP ${res.answer.status}`);
    if (res.answer.truncated) return fail(`answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
    let json: unknown;
    try {
      json = JSON.parse(res.answer.raw.toString('utf8'));
    } catch {
      return fail('answer is not JSON');
    }
    const list = c.list_path ? compilePath(c.list_path)(json) : json;
    if (!Array.isArray(list))
      return fail(c.list_path ? `no list at "${c.list_path}"` : 'the answer is not a list: set list_path');
    shown.items = list.length;
    for (const raw of list) {
      const item = readItem(c, raw);
      if (item) items.push(item);
    }
    if (!paging || list.length < paging.page_size) break;
  }
  return { items, requests, error: null };
}

/** A lead the run found by its partner lead id: what masking the run for its reader needs. */
export type MatchedLead = { partner_lead_id: string; email: string; phone: string };

/**
 * One run, and the leads it matched. Not a dry run: changes are applied and audited. Never
 * throws for the partner's failures (they are the run's error).
 */
export async function runPull(
  db: DB,
  agent: Agent,
  partner: { id: string; name: string },
  c: StoredStatusPull,
  opts: { dryRun: boolean },
): Promise<{ run: PullRun; matched: MatchedLead[] }> {
  const { items, requests, error } = await fetchItems(agent, c, Date.now());
  const run: PullRun = {
    dry_run: opts.dryRun,
    ok: error === null,
    error,
    requests,
    items_read: items.length,
    changes: [],
    unmatched: [],
    unchanged: 0,
  };
  // The last word for a lead wins when a window lists it twice.
  const byId = new Map(items.map((i) => [i.partner_lead_id, i]));
  const matched: MatchedLead[] = [];
  try {
    await db.transaction().execute(async (tx) => {
      for (const item of byId.values()) {
        let q = tx
          .selectFrom('leads')
          .select([...CONVERSION_LEAD_COLUMNS, 'email', 'phone'])
          .where('partner_id', '=', partner.id)
          .where('partner_lead_id', '=', item.partner_lead_id)
          .where('status', '=', 'delivered');
        if (isPostgres(tx)) q = q.forUpdate();
        const leads = await q.limit(2).execute();
        if (leads.length !== 1) {
          if (run.unmatched.length < MAX_UNMATCHED_SHOWN) run.unmatched.push(item.partner_lead_id);
          continue;
        }
        const lead = leads[0];
        matched.push({ partner_lead_id: item.partner_lead_id, email: lead.email, phone: lead.phone });
        const applied = await applyConversion(tx, lead, item.conversion, 'pull');
        if (!applied.changed) {
          run.unchanged++;
          continue;
        }
        run.changes.push({
          partner_lead_id: item.partner_lead_id,
          lead_id: lead.id,
          status_word: item.word,
          sale_status: { from: lead.sale_status, to: applied.patch.sale_status ?? lead.sale_status },
          ftd: applied.patch.ftd_at !== undefined,
          notes: applied.notes,
        });
        if (!opts.dryRun) {
          await audit(tx, SYSTEM, {
            action: 'lead.status_pulled',
            target_type: 'lead',
            target_id: lead.id,
            via: 'system',
            details: { partner_id: partner.id, partner_name: partner.name, changes: applied.changes },
          });
        }
      }
      if (opts.dryRun) throw new DryRun();
    });
  } catch (err) {
    if (!(err instanceof DryRun)) throw err;
  }
  return { run, matched };
}

/** Records a scheduled or manual (not dry) run's health; the third failure in a row raises a partner.pull_failed alert. */
export async function recordRun(
  db: DB,
  partner: { id: string; name: string },
  c: StoredStatusPull,
  run: PullRun,
  log: FastifyBaseLogger,
) {
  const now = nowIso();
  const row = await db
    .selectFrom('partner_status_pulls')
    .select(['consecutive_failures', 'last_ok_at'])
    .where('partner_id', '=', partner.id)
    .executeTakeFirst();
  if (!row) return;
  const failures = run.ok ? 0 : Number(row.consecutive_failures) + 1;
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('partner_status_pulls')
      .set({
        last_run_at: now,
        ...(run.ok && { last_ok_at: now }),
        last_error: run.error,
        last_updated: run.changes.length,
        consecutive_failures: failures,
        next_run_at: new Date(Date.now() + c.interval_minutes * 60_000).toISOString(),
        lease_until: null,
      })
      .where('partner_id', '=', partner.id)
      .execute();
    if (failures === ALERT_AFTER_FAILURES) {
      await emitEvent(tx, {
        type: 'partner.pull_failed',
        partner_id: partner.id,
        data: { failures, error: run.error, last_ok_at: row.last_ok_at },
        dedupe_key: `partner.pull_failed:${partner.id}:${row.last_ok_at ?? 'never'}`,
      });
      log.warn({ partnerId: partner.id, error: run.error }, 'status pull failing');
    }
  });
}
