import { httpApi, HttpApiInput, HttpApiShown } from './http-api.js';
import type { IntegrationKind, IntegrationKindName, IntegrationOf, StoredIntegration } from './types.js';

// The registry of integration kinds: kind → implementation, and the API's integration schemas.

const KINDS: { [K in IntegrationKindName]: IntegrationKind<IntegrationOf<K>> } = {
  'http-api': httpApi,
};

/** The kind of an integration stored without one (every integration so far). */
export const DEFAULT_KIND: IntegrationKindName = 'http-api';

/** The implementation of the integration's kind. */
export function kindOf<I extends StoredIntegration>(integration: I): IntegrationKind<I> {
  return KINDS[integration.kind ?? DEFAULT_KIND] as unknown as IntegrationKind<I>;
}

/** How long a call through the integration may take (ms). */
export const callTimeoutMs = (integration: StoredIntegration) => kindOf(integration).timeoutMs(integration);

// The integration as the API shows and takes it. One kind so far, so its schemas as they are
// (no `kind` field: the published shape is unchanged); a second kind makes these a union.
export const Integration = HttpApiShown;
export const IntegrationInput = HttpApiInput;
export type IntegrationInput = HttpApiInput;
