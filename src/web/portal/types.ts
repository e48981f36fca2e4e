import type { paths } from '../api/schema';

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;

export type LeadQuery = NonNullable<paths['/api/portal/leads']['get']['parameters']['query']>;
export type LeadFilters = Omit<LeadQuery, 'cursor' | 'limit'>;
export type PortalLead = Json<paths['/api/portal/leads/{id}']['get']['responses'][200]>;
export type StatsQuery = NonNullable<paths['/api/portal/stats']['get']['parameters']['query']>;
export type GroupBy = NonNullable<StatsQuery['group_by']>;
export type PortalCampaign = Json<paths['/api/portal/campaigns']['get']['responses'][200]>['data'][number];

export const LEAD_STATUSES = ['new', 'pending', 'delivered', 'rejected', 'duplicate', 'failed'] as const;

/** A payout in cents as money ("12.50 EUR"); "—" when not shown. */
export const money = (cents: number | null | undefined, currency: string | null | undefined) =>
  cents === null || cents === undefined ? '—' : `${(cents / 100).toFixed(2)}${currency ? ` ${currency}` : ''}`;
