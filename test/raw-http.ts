// One HTTP request with the request target exactly as given: Node writes `path` verbatim into
// the request line, so absolute-form targets, encoded slashes and dot segments reach the server
// as a client sent them (app.inject normalizes them away first).
import http from 'node:http';

export interface RawAnswer {
  status: number;
  body: string;
}

export function sendRaw(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const bodyHeaders: Record<string, string> =
      body === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const req = http.request(
      { host: '127.0.0.1', port, method, path: target, agent: false, headers: { ...headers, ...bodyHeaders } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
