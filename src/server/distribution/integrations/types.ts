import type { HttpApiIntegration } from './http-api.js';

// A partner integration: how a lead is offered to a partner and how its answer is read. One
// shape per kind, told apart by `kind`; the partner client sends and reads, and the partner
// feature checks and masks, through the kind's implementation (index.ts). Integrations stored
// so far carry no `kind`: they are 'http-api'.

/** A partner's integration as read (partners.integration JSON, header values opened: integrationFromStore). */
export type StoredIntegration = HttpApiIntegration;

export type IntegrationKindName = NonNullable<StoredIntegration['kind']>;

/** The stored shape of one kind. */
export type IntegrationOf<K extends IntegrationKindName> = Extract<StoredIntegration, { kind?: K }>;

export { MAX_ANSWER_BYTES, type IntegrationKind, type LeadForPartner, type Verdict } from './kind.js';
