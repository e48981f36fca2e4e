import { api, must } from '../api/client';

export interface Option {
  value: string;
  label: string;
}

type Listed = '/api/partners' | '/api/traffic-providers' | '/api/flows' | '/api/campaigns';

/** Every item of a list, for pickers (operators have tens of them, not thousands); paused ones say so. */
export async function allOptions(path: Listed): Promise<Option[]> {
  const out: Option[] = [];
  let cursor: string | undefined;
  do {
    const page = must(await api.GET(path, { params: { query: { limit: 500, cursor } } }));
    out.push(...page.data.map((x) => ({ value: x.id, label: x.status === 'paused' ? `${x.name} (paused)` : x.name })));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}
