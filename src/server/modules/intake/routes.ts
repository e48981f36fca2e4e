import { invalid, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { IntakeAnswer, IntakeHeaders, IntakeLead } from './schemas.js';
import { authenticateProvider } from '../../auth/machine-tokens.js';
import { clientIp } from '../../auth/guard.js';
import { answerOf, currentAnswer, ProviderChanged, resolveCampaign, storeLead, type Started } from './service.js';
import { readIntake } from './validate.js';
import { providerAutologinUrl } from '../autologin/service.js';

const DESCRIPTION =
  'A traffic provider posts one lead. It is stored before any buyer is called, then offered to the buyers of its ' +
  "campaign's flow; the answer comes when a buyer took it or none did, or, if that takes longer than the server's " +
  'INTAKE_WAIT_MS (default 25 s), at once with status `pending` while delivery goes on. Always 201 for a stored lead, ' +
  'whatever its status; `reason` says why it is not delivered. Invalid input: 400 naming every bad field, nothing stored. ' +
  "Duplicates (per the provider's duplicate policy: same email and/or phone within its window) are stored with status " +
  '`duplicate` and not offered to buyers. `campaign_id` may be left out when the provider has exactly one active campaign. ' +
  "Send an `Idempotency-Key` to retry safely: the same key within 24 hours answers the first lead's current state.";

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export default async function intakeRoutes(app: App) {
  /** The delivery's outcome, or `pending` when it takes longer than INTAKE_WAIT_MS (it goes on: the runner tracks it). */
  async function deliver(leadId: string, started: Started | null): Promise<IntakeAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(resolve, app.config.intakeWaitMs, null);
    });
    try {
      const delivery = started
        ? app.delivery.runStarted(started.plan, started.attemptId, started.lease)
        : app.delivery.run(leadId);
      const outcome = await Promise.race([delivery, late]);
      return outcome
        ? answerOf(leadId, outcome)
        : answerOf(leadId, { status: 'pending', autologin_url: null, reason: null });
    } catch {
      // A bug in delivery (the runner logs it). The lead is stored and leased; the recovery sweep
      // takes it up when the lease ends. Answer what it is, so the provider does not send it again.
      // If the database cannot even say that (it went away after the lead was stored), the lead
      // is stored and pending all the same: a 503 would make the provider send it twice.
      return currentAnswer(app.db, leadId).catch(() =>
        answerOf(leadId, { status: 'pending', autologin_url: null, reason: null }),
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** The request is refused anyway: also say whether its campaign would have been, so one 400 names every bad field. */
  async function withCampaignError(providerId: string, body: unknown, errors: FieldError[]): Promise<FieldError[]> {
    const sent = isRecord(body) ? body.campaign_id : undefined;
    const checkable = isRecord(body) && (sent === undefined || sent === null || typeof sent === 'string');
    if (!checkable || errors.some((e) => e.field === 'campaign_id')) return errors;
    const campaign = await resolveCampaign(app.db, providerId, typeof sent === 'string' ? sent : null);
    return 'field' in campaign ? [...errors, campaign] : errors;
  }

  app.post(
    '/api/intake/leads',
    {
      config: { intake: true, allowlistExempt: true },
      // Schema errors are attached rather than answered at once, so that the checks a schema
      // cannot make (phone, country, email, IP, campaign) are reported in the same 400.
      attachValidation: true,
      schema: {
        operationId: 'postLead',
        tags: ['Intake'],
        summary: 'Post a lead (traffic providers)',
        description: DESCRIPTION,
        headers: IntakeHeaders,
        body: IntakeLead,
        response: { 201: IntakeAnswer, ...problems(409) },
      },
    },
    async (req, reply) => {
      let provider = req.trafficProvider!; // the intake guard set it, or answered 401/403
      // A provider let in by a row kept in memory (auth/machine-tokens.ts) is confirmed before
      // anything is answered: by intake's own read (storeLead), or here by reading it.
      const afresh = async () => {
        provider = await authenticateProvider(app.db, req.headers.authorization, clientIp(req), true);
      };
      const read = readIntake(req.body, req.validationError, req.headers['idempotency-key']);
      if ('errors' in read) {
        if (provider.kept) await afresh();
        return invalid(await withCampaignError(provider.id, req.body, read.errors));
      }
      let stored;
      try {
        stored = await storeLead(app.db, provider, read.input);
      } catch (e) {
        if (!(e instanceof ProviderChanged)) throw e;
        await afresh(); // the provider changed: answered from its row as it is now (a 401 or 403 when it refuses)
        stored = await storeLead(app.db, provider, read.input);
      }
      let answer: IntakeAnswer;
      if (stored.replay) answer = await currentAnswer(app.db, stored.leadId);
      else if (stored.status === 'pending') answer = await deliver(stored.leadId, stored.started);
      else answer = answerOf(stored.leadId, { status: stored.status, autologin_url: null, reason: stored.reason });
      // A partner tracking its links: the provider gets Leadgate's link instead (modules/autologin).
      if (answer.autologin_url)
        answer.autologin_url = await providerAutologinUrl(app.db, answer.id, answer.autologin_url);
      if (!stored.replay) app.metrics.leadReceived(answer.status); // a replayed Idempotency-Key is no new lead
      return reply.status(201).send(answer);
    },
  );
}
