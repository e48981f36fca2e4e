import { integrationBodyErrors } from '../../distribution/integrations/index.js';
import { dealErrors } from '../../distribution/prices.js';
import type { FieldError } from '../../http/errors.js';
import { isTimezone } from '../operators/service.js';

// The checks a partner's body passes beyond its schema (rules: time zone, caps, deal; the
// integration's are its kind's, distribution/integrations/): used by the use cases in
// service.ts, the route config's moreChecks and the test send.

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The checks below (time zone, caps, deal) and the integration's (its kind's: URL, header names,
 * template placeholders…) on a body its schema refused, for the same 400 (route config
 * moreChecks): whatever has the right type is checked, the rest is the schema's to name.
 */
export function partnerBodyChecks(body: unknown, allowedNetworks: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(body)) return errors;
  const wh = body.working_hours;
  const cap = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
  checkPartnerRules(
    {
      working_hours: isObject(wh) && typeof wh.timezone === 'string' ? { timezone: wh.timezone } : null,
      daily_cap: cap(body.daily_cap),
      hourly_cap: cap(body.hourly_cap),
      total_cap: cap(body.total_cap),
      deal: body.deal,
    },
    errors,
  );
  integrationBodyErrors(body.integration, allowedNetworks, errors);
  return errors;
}

/** Checks shared by create and update, on the values the partner would end up with (the deal as sent: it is replaced whole). */
export function checkPartnerRules(
  p: {
    working_hours: { timezone: string } | null;
    daily_cap: number | null;
    hourly_cap: number | null;
    total_cap: number | null;
    deal?: unknown;
  },
  errors: FieldError[],
) {
  if (p.working_hours && !isTimezone(p.working_hours.timezone)) {
    errors.push({
      field: 'working_hours.timezone',
      message: `"${p.working_hours.timezone}" is not an IANA time zone (e.g. Europe/Berlin)`,
    });
  }
  if (p.daily_cap !== null && p.total_cap !== null && p.total_cap < p.daily_cap) {
    errors.push({ field: 'total_cap', message: `must be at least the daily cap (${p.daily_cap})` });
  }
  if (p.daily_cap !== null && p.hourly_cap !== null && p.hourly_cap > p.daily_cap) {
    errors.push({ field: 'hourly_cap', message: `must be at most the daily cap (${p.daily_cap})` });
  }
  errors.push(...dealErrors(p.deal));
}
