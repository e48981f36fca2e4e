import type { FieldError } from '../../http/errors.js';
import type { OutboundRequest } from '../../outbound/exchange.js';
import { sealValues, unsealValues } from '../../secrets/box.js';
import { httpApi, HttpApiInput, HttpApiShown } from './http-api.js';
import type { IntegrationKind, IntegrationKindName, IntegrationOf, StoredIntegration } from './types.js';

// The registry of integration kinds: kind → implementation, the API's integration schemas, and
// what the partner client and the partner feature call, dispatched by kind. Adding a kind: its
// file implementing IntegrationKind (kind.ts), its stored shape in the union in types.ts, one
// entry in KINDS (the compiler insists), and its schemas in the union below.

// The integration as the API shows and takes it. One kind so far, so its schemas as they are
// (no `kind` field: the published shape is unchanged); a second kind makes these a union.
export const Integration = HttpApiShown;
export const IntegrationInput = HttpApiInput;
export type IntegrationInput = HttpApiInput;

/** What the API takes for one kind. */
type InputOf<K extends IntegrationKindName> = Extract<IntegrationInput, { kind?: K }>;

const KINDS: { [K in IntegrationKindName]: IntegrationKind<IntegrationOf<K>, InputOf<K>> } = {
  'http-api': httpApi,
};

/** The kind of an integration stored without one (every integration so far). */
export const DEFAULT_KIND: IntegrationKindName = 'http-api';

const named = (name: IntegrationKindName | undefined) =>
  KINDS[name ?? DEFAULT_KIND] as unknown as IntegrationKind<StoredIntegration, IntegrationInput>;

/** The implementation of the integration's kind. */
export function kindOf<I extends StoredIntegration>(integration: I): IntegrationKind<I> {
  return KINDS[integration.kind ?? DEFAULT_KIND] as unknown as IntegrationKind<I>;
}

/** How long a call through the integration may take (ms). */
export const callTimeoutMs = (integration: StoredIntegration) => kindOf(integration).timeoutMs(integration);

/**
 * The form to store from what the API took (its kind's `resolve`): pushes one error per bad
 * field; masked secrets keep the stored values of `previous` when it is of the same kind.
 */
export function resolveIntegration(
  input: IntegrationInput,
  previous: StoredIntegration | null,
  errors: FieldError[],
  allowedNetworks: readonly string[],
): StoredIntegration {
  const kind = input.kind ?? DEFAULT_KIND;
  const sameKind = previous !== null && (previous.kind ?? DEFAULT_KIND) === kind;
  return named(kind).resolve(input, sameKind ? previous : null, errors, allowedNetworks);
}

/**
 * The integration part of a body its schema refused (`raw`: its `integration`, unchecked): the
 * checks of the kind it names, of the default kind when it names none it knows (the schema says so).
 */
export function integrationBodyErrors(raw: unknown, allowedNetworks: readonly string[], errors: FieldError[]) {
  const name = (raw as { kind?: unknown } | null | undefined)?.kind;
  const known = typeof name === 'string' && Object.hasOwn(KINDS, name);
  named(known ? (name as IntegrationKindName) : undefined).bodyErrors(raw, allowedNetworks, errors);
}

/** As API answers show it: secrets masked. */
export const shownIntegration = (integration: StoredIntegration) => kindOf(integration).shown(integration);

/** A request the integration made, as shown: its secrets masked. */
export const shownRequest = (integration: StoredIntegration, request: OutboundRequest) =>
  kindOf(integration).shownRequest(integration, request);

/** For audit details: no secret values. */
export const integrationForAudit = (integration: StoredIntegration) => kindOf(integration).forAudit(integration);

/** The integration as stored: its header values sealed (secrets/box.ts). */
export const integrationToStore = (integration: StoredIntegration) =>
  JSON.stringify({ ...integration, headers: sealValues(integration.headers ?? {}, 'partner-header') });

/** The stored integration, header values opened. */
export function integrationFromStore(json: string): StoredIntegration {
  const stored = JSON.parse(json) as StoredIntegration;
  return { ...stored, headers: unsealValues(stored.headers ?? {}, 'partner-header') };
}
