import { readFileSync } from 'node:fs';

// package.json is two folders up from both src/server and dist/server.
export const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
