import { Type } from 'typebox';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf, listAuditActions, listAuditLog } from './service.js';

const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ format: 'date-time' }),
    actor_id: Type.Union([Type.String(), Type.Null()]),
    actor_email: Type.Union([Type.String(), Type.Null()]),
    actor_name: Type.Union([Type.String(), Type.Null()], {
      description: "The operator's name now; null for the system, an anonymous caller or a deleted operator",
    }),
    actor_kind: Type.Union([Type.Literal('operator'), Type.Literal('provider_user')], {
      description:
        "operator: an operator (or the system, or an anonymous caller: see via); provider_user: a traffic provider's portal user",
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
    async (req) => listAuditLog(app.db, actorOf(req), req.query),
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
    async (req) => listAuditActions(req.query),
  );
}
