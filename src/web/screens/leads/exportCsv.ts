import { api } from '../../api/client';
import type { paths } from '../../api/schema';
import { saveAnswer } from '../../ui/download';

type ExportQuery = NonNullable<paths['/api/leads/export']['get']['parameters']['query']>;

/**
 * Downloads the leads a query selects as CSV. The export needs the session's Bearer token, so a
 * plain link cannot fetch it: the client fetches the file and hands the browser a blob to save.
 * Throws with the API's message.
 */
export async function downloadLeads(query: ExportQuery): Promise<void> {
  saveAnswer(await api.GET('/api/leads/export', { params: { query }, parseAs: 'blob' }), 'leads.csv');
}
