import { problemText } from '../api/client';

/** Hands a fetched file to the browser as a download (the request carried the session token, so a plain link could not). */
export function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Saves a file the API answered (openapi-fetch with parseAs: 'blob') under the name its
 * Content-Disposition gives; throws with the API's message when it answered a problem.
 */
export function saveAnswer(res: { data?: unknown; error?: unknown; response: Response }, fallbackName: string) {
  if (res.error !== undefined || !res.data) throw new Error(problemText(res.error));
  const name = /filename="?([^";]+)"?/.exec(res.response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  saveBlob(res.data as Blob, name);
}
