import { Type, type Static } from 'typebox';
import { PROVIDER_SALE_STATUSES } from './portal-settings.js';

const ProviderWord = Type.Unsafe<(typeof PROVIDER_SALE_STATUSES)[number]>({
  type: 'string',
  enum: [...PROVIDER_SALE_STATUSES],
  description: 'The word the provider is shown',
});

const settingsFields = {
  portal_enabled: Type.Boolean({ description: "The provider's users may sign in to the portal" }),
  show_sale_status: Type.Boolean({ description: 'Show sale statuses (mapped by sale_status_map)' }),
  show_payout: Type.Boolean({ description: 'Show what each lead earns' }),
  show_contacts: Type.Boolean({ description: 'Show the contacts the provider sent, masked' }),
  ftd_hold_hours: Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: 720,
    description: 'An FTD reaches the provider (portal, log, postbacks) this many hours after it is recorded (0–720)',
  }),
  sale_status_map: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), ProviderWord, {
    maxProperties: 500,
    description:
      "A partner's sale-status word (trimmed, case ignored) → the word the provider sees; a word not listed reads in_progress",
  }),
};

export const PutPortalSettings = Type.Object(settingsFields, {
  additionalProperties: false,
  title: 'PutProviderPortalSettings',
});
export type PutPortalSettings = Static<typeof PutPortalSettings>;

export const ProviderPortalSettings = Type.Object(
  {
    ...settingsFields,
    partner_words: Type.Array(Type.String(), {
      description:
        "Read only: the sale-status words partners have used on this provider's leads (lower case; at most 200)",
    }),
  },
  { title: 'ProviderPortalSettings' },
);
