// Spectral's OWASP API Security ruleset, run on the schema the server publishes. Every input
// (parameters and request bodies) is bounded: strings have a maxLength, integers a format and
// limits, arrays maxItems. Every rate-limited operation declares its 429 and the RateLimit
// headers. Findings the ruleset reports that are design decisions are listed below, each with
// its reason; anything else fails the test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import spectralCore from '@stoplight/spectral-core';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';
import { buildTestApp } from './helpers.js';

const { Spectral } = spectralCore as unknown as {
  Spectral: new () => { setRuleset(r: unknown): void; run(doc: string): Promise<Finding[]> };
};

interface Finding {
  code: string;
  message: string;
  path: (string | number)[];
  severity: number; // 0 error, 1 warning, 2 info, 3 hint
}

/** Ruleset findings that are deliberate, with why. */
const ACCEPTED: { code: string; path: RegExp; why: string }[] = [
  {
    code: 'owasp:api2:2023-no-credentials-in-url',
    path: /^paths\.\/api\/postback\/\{token\}\./,
    why: "a partner's postback URL is its credential: their systems only fill in URL templates (the token is redacted from logs)",
  },
  {
    code: 'owasp:api4:2023-rate-limit',
    path: /^paths\.\/api\/health(\/live)?\.get\./,
    why: 'health checks are not rate limited (below), so their answers carry no RateLimit headers',
  },
  {
    code: 'owasp:api4:2023-rate-limit-responses-429',
    path: /^paths\.\/api\/health(\/live)?\.get\./,
    why: 'health checks are not rate limited: a load balancer polls them, and they read nothing',
  },
  {
    code: 'owasp:api8:2023-define-cors-origin',
    path: /\.integration\.properties\.headers$/,
    why: 'a false positive: a request-body property named "headers" (the partner integration\'s own headers), not HTTP response headers',
  },
];

const isInput = (f: Finding) => f.path.includes('parameters') || f.path.includes('requestBody');
const accepted = (f: Finding) => ACCEPTED.some((a) => a.code === f.code && a.path.test(f.path.join('.')));
const show = (f: Finding) => `${f.code} at ${f.path.join('.')}: ${f.message}`;

test("Spectral's OWASP ruleset: every input bounded, 429 declared where requests are limited", async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const spectral = new Spectral();
  spectral.setRuleset((owaspRuleset as { default?: unknown }).default ?? owaspRuleset);
  const findings = await spectral.run(JSON.stringify(doc));
  assert.ok(findings.length > 0, 'the ruleset ran'); // it always has warnings on a document this size

  const inputErrors = findings.filter((f) => f.severity === 0 && isInput(f) && !accepted(f));
  assert.deepEqual(inputErrors.map(show), [], 'unbounded or unsafe inputs');

  const missing429 = findings.filter((f) => f.code === 'owasp:api4:2023-rate-limit-responses-429' && !accepted(f));
  assert.deepEqual(missing429.map(show), [], 'operations without a declared 429');
  const noHeaders = findings.filter((f) => f.code === 'owasp:api4:2023-rate-limit' && !accepted(f));
  assert.deepEqual(noHeaders.map(show), [], 'responses without the RateLimit headers');

  // Each accepted exception still happens (else it is stale and should go).
  for (const a of ACCEPTED)
    assert.ok(
      findings.some((f) => f.code === a.code && a.path.test(f.path.join('.'))),
      `stale exception ${a.code}`,
    );
});
