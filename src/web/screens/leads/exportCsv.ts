import { api, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { saveBlob } from '../../ui/download';

type ExportQuery = NonNullable<paths['/api/leads/export']['get']['parameters']['query']>;

/**
 * Downloads the leads a query selects as CSV. The export needs the session's Bearer token, so a
 * plain link cannot fetch it: the client fetches the file and hands the browser a blob to save.
 * Throws with the API's message.
 */
export async function downloadLeads(query: ExportQuery): Promise<void> {
  const res = await api.GET('/api/leads/export', { params: { query }, parseAs: 'blob' });
  if (res.error !== undefined || !res.data) throw new Error(problemText(res.error));
  const name = /filename="?([^";]+)"?/.exec(res.response.headers.get('content-disposition') ?? '')?.[1] ?? 'leads.csv';
  saveBlob(res.data as Blob, name);
}
