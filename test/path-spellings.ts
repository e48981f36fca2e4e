// Spellings of one API path that a router may decode to it, and ones it must refuse: the route
// walks (route-walk.test.ts, portal-walk.test.ts) try each, since access follows the route that
// runs, never the spelling.

const encodeChar = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** Spellings of one path: the ones a router may decode to it, and the ones refused outright. */
export function spellings(path: string, origin: string): string[] {
  const rest = path.slice('/api'.length);
  const lastSlash = path.lastIndexOf('/');
  const lastChar = path.length - 1;
  return [
    path,
    `/${encodeChar('a')}pi${rest}`,
    `/ap${encodeChar('i')}${rest}`,
    `/${encodeChar('a')}${encodeChar('p')}${encodeChar('i')}${rest}`,
    `/%41pi${rest}`, // %41 is "A": a different path
    `/API${rest}`,
    `${path}/`,
    `${path}?x=/../`,
    `${path.slice(0, lastChar)}${encodeChar(path[lastChar])}`,
    `/api/${rest.slice(1).replace('/', '//')}`,
    `//${path.slice(1)}`,
    `/./${path.slice(1)}`,
    `/api/../${path.slice(1)}`,
    `/api/%2e%2e/${path.slice(1)}`,
    `/api/.%2E/${path.slice(1)}`,
    `${path.slice(0, lastSlash)}%2f${path.slice(lastSlash + 1)}`,
    `${path.slice(0, lastSlash)}%2F${path.slice(lastSlash + 1)}`,
    `${path.slice(0, lastSlash)}%5c${path.slice(lastSlash + 1)}`,
    `${path}%00`,
    `${path};x=1`,
    `${origin}${path}`, // absolute-form
    `http://example.test${path}`,
  ];
}
