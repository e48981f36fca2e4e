import { Type } from 'typebox';
import { nowIso } from '../../db/ids.js';
import { nestsDeeperThan } from '../../distribution/template.js';
import { IdParams } from '../../http/common-schemas.js';
import { invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { checkUrl, maskHeaders, originOf, resolveSecretHeaders } from '../partners/checks.js';
import { canSeeContacts } from '../leads/search.js';
import { maskRun } from './mask.js';
import { MAX_BODY_DEPTH, recordRun, runPull } from './pull.js';
import { PullRun, StatusPull, StatusPullInput, type StoredStatusPull } from './schemas.js';

const TAGS = ['Partners'];

export default async function statusPullRoutes(app: App) {
  const partner = async (id: string) =>
    (await app.db
      .selectFrom('partners')
      .select(['id', 'name', 'archived_at'])
      .where('id', '=', id)
      .executeTakeFirst()) ?? notFound('partner');
  const stored = (id: string) =>
    app.db.selectFrom('partner_status_pulls').selectAll().where('partner_id', '=', id).executeTakeFirst();

  const shown = (row: NonNullable<Awaited<ReturnType<typeof stored>>>) => {
    const config = JSON.parse(row.config) as StoredStatusPull;
    return {
      config: { ...config, request_headers: maskHeaders(config.request_headers) },
      health: {
        last_run_at: row.last_run_at,
        last_ok_at: row.last_ok_at,
        last_error: row.last_error,
        last_updated: Number(row.last_updated),
        consecutive_failures: Number(row.consecutive_failures),
        next_run_at: config.enabled ? row.next_run_at : null,
      },
    };
  };

  app.get(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'getStatusPull',
        tags: TAGS,
        summary: "A partner's status pull and its health",
        description: '404 when the partner has none.',
        params: IdParams,
        response: { 200: StatusPull, ...problems(404) },
      },
    },
    async (req) => {
      await partner(req.params.id);
      return shown((await stored(req.params.id)) ?? notFound('status pull for this partner'));
    },
  );

  app.put(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'putStatusPull',
        tags: TAGS,
        summary: "Set a partner's status pull",
        description:
          "Asks the partner's API for its leads' statuses every interval_minutes over the last lookback_hours, and applies them as a postback would: " +
          'the sale status when it differs, the FTD once per lead (the first reported wins), the source recorded as pull. The first run is due at once.',
        params: IdParams,
        body: StatusPullInput,
        response: { 200: StatusPull, ...problems(404, 409) },
      },
    },
    async (req) => {
      const p = await partner(req.params.id);
      const b = req.body;
      const previous = await stored(p.id);
      const before = previous ? (JSON.parse(previous.config) as StoredStatusPull) : null;
      const errors: FieldError[] = [];
      checkUrl(b.url, app.config.partnerAllowedNetworks, errors, 'url');
      const origin = originOf(b.url);
      const headers = resolveSecretHeaders(
        b.request_headers ?? {},
        before?.request_headers ?? {},
        before !== null && origin !== null && origin === originOf(before.url),
        'request_headers',
        errors,
      );
      const method = b.method ?? 'GET';
      if (method === 'GET' && b.body_template)
        errors.push({ field: 'body_template', message: 'is sent with POST only' });
      // Before anything renders or stringifies it: both recurse, and thousands of levels overflow the stack.
      else if (b.body_template && nestsDeeperThan(b.body_template, MAX_BODY_DEPTH))
        errors.push({ field: 'body_template', message: `nests deeper than ${MAX_BODY_DEPTH} levels` });
      const words = new Set<string>();
      for (const word of Object.keys(b.status_map ?? {})) {
        const w = word.trim().toLowerCase();
        if (words.has(w))
          errors.push({
            field: `status_map.${word}`,
            message: 'is the same word as another (case and spaces around are ignored)',
          });
        words.add(w);
      }
      if (!b.status_path && !b.ftd_path)
        errors.push({ field: 'status_path', message: 'is needed, or ftd_path: the pull must read something' });
      if (errors.length) invalid(errors);
      const config: StoredStatusPull = {
        method,
        url: b.url,
        request_headers: headers,
        body_template: method === 'POST' ? (b.body_template ?? null) : null,
        date_format: b.date_format ?? 'iso',
        list_path: b.list_path ?? '',
        lead_id_path: b.lead_id_path,
        status_path: b.status_path ?? '',
        ftd_path: b.ftd_path ?? '',
        revenue_path: b.revenue_path ?? '',
        paging: b.paging ?? { type: 'none' },
        interval_minutes: b.interval_minutes,
        lookback_hours: b.lookback_hours,
        timeout_ms: b.timeout_ms ?? 10_000,
        status_map: b.status_map ?? {},
        enabled: b.enabled ?? true,
      };
      const now = nowIso();
      await app.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('partner_status_pulls')
          .values({
            partner_id: p.id,
            config: JSON.stringify(config),
            next_run_at: now,
            updated_at: now,
            last_updated: 0,
            consecutive_failures: 0,
          })
          .onConflict((oc) =>
            oc.column('partner_id').doUpdateSet({ config: JSON.stringify(config), next_run_at: now, updated_at: now }),
          )
          .execute();
        const forAudit = (c: StoredStatusPull | null) => c && { ...c, request_headers: Object.keys(c.request_headers) };
        await audit(tx, req, {
          action: 'partner.status_pull_updated',
          target_type: 'partner',
          target_id: p.id,
          details: { before: forAudit(before), after: forAudit(config) },
        });
      });
      return shown((await stored(p.id))!);
    },
  );

  app.delete(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'deleteStatusPull',
        tags: TAGS,
        summary: "Remove a partner's status pull",
        params: IdParams,
        response: { 204: Type.Null(), ...problems(404) },
      },
    },
    async (req, reply) => {
      const p = await partner(req.params.id);
      await app.db.transaction().execute(async (tx) => {
        const res = await tx.deleteFrom('partner_status_pulls').where('partner_id', '=', p.id).executeTakeFirst();
        if (Number(res.numDeletedRows) === 0) notFound('status pull for this partner');
        await audit(tx, req, {
          action: 'partner.status_pull_deleted',
          target_type: 'partner',
          target_id: p.id,
          details: { name: p.name },
        });
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/partners/:id/status-pull/run',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'runStatusPull',
        tags: TAGS,
        summary: 'Pull now',
        description:
          'Runs the pull at once. dry_run (the default) calls the partner and shows the requests, their answers and what would change, changing nothing; ' +
          'dry_run=false applies the changes and counts as the scheduled run. ' +
          "The partner's text (answer excerpts, status words) shows emails and phone numbers masked unless the caller holds `leads:contacts`.",
        params: IdParams,
        body: Type.Object({ dry_run: Type.Boolean({ default: true }) }, { additionalProperties: false }),
        response: { 200: PullRun, ...problems(404) },
      },
    },
    async (req) => {
      const p = await partner(req.params.id);
      const row = (await stored(p.id)) ?? notFound('status pull for this partner');
      const config = JSON.parse(row.config) as StoredStatusPull;
      const { run, matched } = await runPull(app.db, app.statusPull.agent, p, config, { dryRun: req.body.dry_run });
      if (!req.body.dry_run) await recordRun(app.db, p, config, run, req.log);
      return canSeeContacts(principalOf(req)) ? run : maskRun(run, matched);
    },
  );
}
