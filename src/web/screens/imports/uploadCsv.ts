import { problemText, session } from '../../api/client';
import type { paths } from '../../api/schema';

export type Uploaded = paths['/api/imports']['post']['responses'][201]['content']['application/json'];

/**
 * POST /api/imports with the file as the body (text/csv), through XMLHttpRequest: fetch cannot
 * tell how much of a request body has been sent, and the progress bar needs it.
 */
export function uploadCsv(file: File, onProgress: (percent: number) => void): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/imports?name=${encodeURIComponent(file.name)}`);
    xhr.setRequestHeader('Content-Type', 'text/csv');
    const token = session.token();
    if (token) xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(Math.round((100 * e.loaded) / e.total));
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: said below
      }
      if (xhr.status === 201) resolve(body as Uploaded);
      else reject(new Error(problemText(body ?? new Error(`The upload failed (${xhr.status}).`))));
    };
    xhr.onerror = () => reject(new Error('The server could not be reached. Please try again.'));
    xhr.send(file);
  });
}
