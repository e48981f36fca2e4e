import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { CreateRule, PreviewRuleBody, Rule, RuleListQuery, RulePreview, UpdateRule } from './schemas.js';
import {
  createRule,
  deleteInjectionRule,
  getRule,
  listInjectionRules,
  previewRule,
  updateInjectionRule,
} from './service.js';

const TAGS = ['Injections'];
const ACCESS = { permission: 'leads:edit' } as const;

const RUNS =
  "Each scheduled occurrence makes one re-injection job (getInjection: rule_id) with the leads the filter selects then, its `last_days` counted back from the occurrence, and the creator's rights at that moment (a scoped role's scope narrows the leads; a disabled creator, or one whose role lost leads:edit, skips the run and `last_run.skipped` says why). After downtime only the latest missed occurrence runs, and only when less than 6 hours late. A scoped role sees only its own rules.";

export default async function injectionRuleRoutes(app: App) {
  app.post(
    '/api/injection-rules/preview',
    {
      config: ACCESS,
      schema: {
        operationId: 'previewInjectionRule',
        tags: TAGS,
        summary: 'How many leads a recurring rule would take if it ran now',
        description: 'The count of leads the filter selects now, `last_days` counted back from now (none: 0).',
        body: PreviewRuleBody,
        response: { 200: RulePreview },
      },
    },
    async (req) => previewRule(app.db, actorOf(req), req.body),
  );

  app.post(
    '/api/injection-rules',
    {
      config: ACCESS,
      schema: {
        operationId: 'createInjectionRule',
        tags: TAGS,
        summary:
          'A recurring re-injection rule: on a schedule, leads chosen by a relative filter go to a flow or partners',
        description: `${RUNS} Bad input: 400 naming each field (the filter takes no dates: use last_days). Audited.`,
        body: CreateRule,
        response: { 201: Rule },
      },
    },
    async (req, reply) => reply.code(201).send(await createRule(app.db, actorOf(req), req.body)),
  );

  app.get(
    '/api/injection-rules',
    {
      config: ACCESS,
      schema: {
        operationId: 'listInjectionRules',
        tags: TAGS,
        summary: 'Recurring re-injection rules, newest first, with their next and last runs',
        querystring: RuleListQuery,
        response: { 200: Page(Rule, 'InjectionRulePage') },
      },
    },
    async (req) => listInjectionRules(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/injection-rules/:id',
    {
      config: ACCESS,
      schema: {
        operationId: 'getInjectionRule',
        tags: TAGS,
        summary: 'One recurring re-injection rule',
        params: IdParams,
        response: { 200: Rule, ...problems(404) },
      },
    },
    async (req) => getRule(app.db, actorOf(req), req.params.id),
  );

  app.patch(
    '/api/injection-rules/:id',
    {
      config: ACCESS,
      schema: {
        operationId: 'updateInjectionRule',
        tags: TAGS,
        summary: 'Change a recurring rule (enable, disable, reschedule…)',
        description:
          'The fields sent replace the stored ones (window: null removes it; flow_id or partner_ids replaces the target) and the whole rule is checked again. A new schedule, or enabling the rule again, runs no occurrence from before the change. Audited.',
        params: IdParams,
        body: UpdateRule,
        response: { 200: Rule, ...problems(404) },
      },
    },
    async (req) => updateInjectionRule(app.db, actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/api/injection-rules/:id',
    {
      config: ACCESS,
      schema: {
        operationId: 'deleteInjectionRule',
        tags: TAGS,
        summary: 'Delete a recurring rule (the jobs it made stay)',
        description: 'Audited.',
        params: IdParams,
        response: { 204: Type.Null(), ...problems(404) },
      },
    },
    async (req, reply) => {
      await deleteInjectionRule(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
