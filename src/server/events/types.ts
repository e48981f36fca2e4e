import type { Permission } from '../auth/permissions.js';

// The events Leadgate tells of (the outbox: migration 20261126T000000Z_event_outbox). Webhooks
// subscribe to them by name; the alerts among them are the dashboard's notifications, each
// shown to operators who may see what it is about.

interface EventTypeInfo {
  /** A few words, for pickers. */
  label: string;
  description: string;
  /** Shown in the notification list (and counted as unread). */
  alert: boolean;
  /** What an operator must hold to see it as a notification, or to subscribe a webhook to it. */
  permission: Permission;
}

export const EVENT_TYPES = {
  'lead.received': {
    label: 'Lead received',
    description: 'A traffic provider posted a lead',
    alert: false,
    permission: 'leads:view',
  },
  'lead.delivered': {
    label: 'Lead delivered',
    description: 'A partner accepted a lead',
    alert: false,
    permission: 'leads:view',
  },
  'lead.rejected': {
    label: 'Lead rejected (or duplicate)',
    description: 'A lead was rejected: by every partner tried, by its flow, or as a duplicate',
    alert: false,
    permission: 'leads:view',
  },
  'lead.failed': {
    label: 'Lead failed',
    description: 'A lead could not be delivered (no answer, an error, or delivery interrupted)',
    alert: false,
    permission: 'leads:view',
  },
  'lead.ftd': {
    label: 'FTD',
    description: "A lead's first deposit (FTD) was recorded",
    alert: false,
    permission: 'leads:view',
  },
  'lead.sale_status_changed': {
    label: 'Sale status changed',
    description: "A lead's sale status changed",
    alert: false,
    permission: 'leads:view',
  },
  'lead.autologin_opened': {
    label: 'Autologin link opened',
    description:
      "A tracked autologin link (the partner's track_autologin) was opened; data: opened_at, opens (the count so far), " +
      'redirected (false: a single-use link opened again), single_use. No address or user agent',
    alert: false,
    permission: 'leads:view',
  },
  'partner.cap_nearly_full': {
    label: 'Partner cap at 90 %',
    description:
      "A partner's cap reached 90 % (once per cap and period: day, hour or in all); data: cap_kind, flow_id, country, counts, period, used, cap",
    alert: true,
    permission: 'partners:view',
  },
  'partner.cap_full': {
    label: 'Partner cap full',
    description:
      "A partner's cap is full (once per cap and period: day, hour or in all); data: cap_kind, flow_id, country, counts, period, used, cap",
    alert: true,
    permission: 'partners:view',
  },
  'partner.failing': {
    label: 'Partner failing or paused',
    description: "A partner's calls failed 5 times in a row, or it was paused after its pause_after_failures",
    alert: true,
    permission: 'partners:view',
  },
  'partner.pull_failed': {
    label: 'Status pull failing',
    description: "A partner's status pull failed 3 times in a row",
    alert: true,
    permission: 'partners:view',
  },
  'traffic_provider.silent': {
    label: 'Traffic provider silent',
    description: 'A traffic provider sent no lead for its silent_after_hours',
    alert: true,
    permission: 'traffic_providers:view',
  },
  'review_queue.waiting': {
    label: 'Leads waiting for review',
    description:
      "A traffic provider's oldest lead held for review has waited longer than the quality settings' review_alert_minutes " +
      '(once per oldest lead); data: held, oldest_held_at, minutes, name',
    alert: true,
    permission: 'leads:view',
  },
  'webhook.disabled': {
    label: 'Webhook disabled',
    description: 'A webhook was disabled after failing for days',
    alert: true,
    permission: 'webhooks:view',
  },
} as const satisfies Record<string, EventTypeInfo>;

export type EventType = keyof typeof EVENT_TYPES;
export const ALL_EVENT_TYPES = Object.keys(EVENT_TYPES) as EventType[];
export const ALERT_TYPES = ALL_EVENT_TYPES.filter((t) => EVENT_TYPES[t].alert);
export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_TYPES, t);

/** Whether these permissions may read events of this type (a notification, a webhook's subscription, a delivery log). */
export const mayReadEvent = (permissions: ReadonlySet<string>, type: EventType) =>
  permissions.has(EVENT_TYPES[type].permission);
