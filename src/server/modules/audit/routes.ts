import { Type } from 'typebox';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { AUDIT_ACTIONS, type AuditAction } from './actions.js';
import { invalid } from '../../http/errors.js';
import { maskLeadContacts } from './contacts.js';
import { withNames } from '../../db/names.js';

const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ format: 'date-time' }),
    actor_id: Type.Union([Type.String(), Type.Null()]),
    actor_email: Type.Union([Type.String(), Type.Null()]),
    actor_name: Type.Union([Type.String(), Type.Null()], {
      description: "The operator's name now; null for the system, an anonymous caller or a deleted operator",
    }),
    via: Type.Union([
      Type.Literal('session'),
      Type.Literal('api_key'),
      Type.Literal('system'),
      Type.Literal('anonymous'),
    ]),
    ip: Type.Union([Type.String(), Type.Null()]),
    action: Type.String({ description: 'e.g. auth.login, auth.login_failed, api_key.created, role.updated' }),
    target_type: Type.Union([Type.String(), Type.Null()]),
    target_id: Type.Union([Type.String(), Type.Null()]),
    target_name: Type.Union([Type.String(), Type.Null()], {
      description:
        "The target's name now (a backup: its file name); for a record deleted since, the name the entry recorded, if any. A lead's name only for callers holding `leads:view`.",
    }),
    details: Type.Object({}, { additionalProperties: true }),
  },
  { title: 'AuditEntry' },
);

export default async function auditRoutes(app: App) {
  app.get(
    '/api/audit-log',
    {
      config: { permission: 'audit:view' },
      schema: {
        operationId: 'listAuditLog',
        tags: ['Audit'],
        summary: 'Security events, newest first',
        description:
          'Details about leads (postbacks, redeliveries, exports) show lead emails and phone numbers masked unless the caller holds `leads:contacts`.',
        querystring: Type.Object(
          {
            ...PageQuery,
            action: Type.Optional(
              Type.String({ maxLength: 100, description: 'Only this action, e.g. auth.login_failed' }),
            ),
            actor_id: Type.Optional(Type.String({ maxLength: 100, description: 'Only events by this operator' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Page(AuditEntry, 'AuditPage') },
      },
    },
    async (req) => {
      const { limit, cursor, action, actor_id } = req.query;
      const after = decodeCursor(cursor, ['id']);
      let q = app.db
        .selectFrom('audit_log')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit + 1);
      if (after) q = q.where('id', '<', after.id);
      if (action) q = q.where('action', '=', action);
      if (actor_id) q = q.where('actor_id', '=', actor_id);
      const rows = await q.execute();
      const page = pageOf(rows, limit, (r) => ({ id: r.id }));
      const permissions = principalOf(req).permissions;
      const data = await withNames(
        app.db,
        page.data.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> })),
        permissions.has('leads:view'),
      );
      // Rule 16: without leads:contacts, no lead's email or phone in any detail either.
      return { ...page, data: permissions.has('leads:contacts') ? data : await maskLeadContacts(app.db, data) };
    },
  );

  app.get(
    '/api/audit-log/actions',
    {
      config: { permission: 'audit:view' },
      schema: {
        operationId: 'listAuditActions',
        tags: ['Audit'],
        summary: 'Every action the audit log records, for filter pickers',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(Type.String(), 'AuditActionPage') },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const after = decodeCursor(cursor, ['action']);
      const start = after ? AUDIT_ACTIONS.indexOf(after.action as AuditAction) + 1 : 0;
      if (after && start === 0) invalid([{ field: 'cursor', message: 'is not a cursor this list produced' }]);
      return pageOf(AUDIT_ACTIONS.slice(start, start + limit + 1), limit, (action) => ({ action }));
    },
  );
}
