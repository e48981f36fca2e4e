// Where a notification leads: the record it is about, so a tap on it opens that.

interface Note {
  type: string;
  partner_id: string | null;
  traffic_provider_id: string | null;
  data: Record<string, unknown>;
}

/** The dashboard path of what the alert is about, or null when there is none to open. */
export function notificationLink(n: Note): string | null {
  if (n.type === 'partner.cap_full' || n.type === 'partner.cap_nearly_full') return '/caps';
  if (n.type.startsWith('partner.') && n.partner_id) return `/partners/${n.partner_id}`;
  if (n.type === 'traffic_provider.silent' && n.traffic_provider_id)
    return `/traffic-providers/${n.traffic_provider_id}`;
  if (n.type === 'review_queue.waiting')
    return `/quality/review${n.traffic_provider_id ? `?traffic_provider_id=${n.traffic_provider_id}` : ''}`;
  if (n.type === 'webhook.disabled' && typeof n.data.webhook_id === 'string')
    return `/settings/webhooks/${n.data.webhook_id}`;
  return null;
}
