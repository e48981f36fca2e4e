// The status sync form: the API's status-pull shapes, the form's fields and the two conversions
// between them (headers and the status map are edited as lines of text).
import type { paths } from '../../api/schema';

export type Pull = NonNullable<
  paths['/api/partners/{id}/status-pull']['get']['responses'][200]['content']['application/json']
>;
export type Config = Pull['config'];
export type Run = paths['/api/partners/{id}/status-pull/run']['post']['responses'][200]['content']['application/json'];

export interface Form {
  method: 'GET' | 'POST';
  url: string;
  headers: string;
  list_path: string;
  lead_id_path: string;
  status_path: string;
  ftd_path: string;
  revenue_path: string;
  paged: boolean;
  first_page: number;
  page_size: number;
  max_pages: number;
  date_format: Config['date_format'];
  interval_minutes: number;
  lookback_hours: number;
  status_map: string;
  enabled: boolean;
}

export const EMPTY: Form = {
  method: 'GET',
  url: '',
  headers: '',
  list_path: '',
  lead_id_path: 'id',
  status_path: 'status',
  ftd_path: '',
  revenue_path: '',
  paged: false,
  first_page: 1,
  page_size: 100,
  max_pages: 20,
  date_format: 'iso',
  interval_minutes: 15,
  lookback_hours: 72,
  status_map: '',
  enabled: false,
};

/** The settings that decide what a run changes (how often it runs and whether it is on aside). */
export const whatItChanges = (f: Form) => JSON.stringify({ ...f, enabled: undefined, interval_minutes: undefined });

export function toForm(c: Config): Form {
  return {
    ...EMPTY,
    method: c.method,
    url: c.url,
    headers: Object.entries(c.request_headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n'),
    list_path: c.list_path,
    lead_id_path: c.lead_id_path,
    status_path: c.status_path,
    ftd_path: c.ftd_path,
    revenue_path: c.revenue_path,
    paged: c.paging.type === 'page',
    ...(c.paging.type === 'page'
      ? { first_page: c.paging.first_page, page_size: c.paging.page_size, max_pages: c.paging.max_pages }
      : {}),
    date_format: c.date_format,
    interval_minutes: c.interval_minutes,
    lookback_hours: c.lookback_hours,
    status_map: Object.entries(c.status_map)
      .map(([word, m]) => `${word} = ${m.sale_status}${m.ftd ? ' [FTD]' : ''}`)
      .join('\n'),
    enabled: c.enabled,
  };
}

/** "Name: value" lines → headers; "word = Sale status [FTD]" lines → the status map. */
export function toBody(f: Form) {
  const headers = Object.fromEntries(
    f.headers
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  const status_map = Object.fromEntries(
    f.status_map
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => {
        const [word, rest] = [l.slice(0, l.indexOf('=')).trim(), l.slice(l.indexOf('=') + 1).trim()];
        const ftd = /\[ftd\]\s*$/i.test(rest);
        return [word, { sale_status: rest.replace(/\[ftd\]\s*$/i, '').trim(), ftd }];
      }),
  );
  return {
    method: f.method,
    url: f.url,
    request_headers: headers,
    list_path: f.list_path,
    lead_id_path: f.lead_id_path,
    status_path: f.status_path,
    ftd_path: f.ftd_path,
    revenue_path: f.revenue_path,
    paging: f.paged
      ? { type: 'page' as const, first_page: f.first_page, page_size: f.page_size, max_pages: f.max_pages }
      : { type: 'none' as const },
    date_format: f.date_format,
    interval_minutes: f.interval_minutes,
    lookback_hours: f.lookback_hours,
    status_map,
    enabled: f.enabled,
  };
}
