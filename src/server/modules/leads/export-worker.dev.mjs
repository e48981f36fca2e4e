// Starts export-worker.ts from source (tests, `npm run dev`): exporter.ts uses this file instead
// of the compiled export-worker.js when it runs under tsx. On Node 20, `execArgv: ['--import',
// 'tsx']` alone races the worker's first import and fails now and then with "Unknown file
// extension .ts"; registering tsx's loader here first, then importing, does not.
import { register } from 'tsx/esm/api';

register();
await import('./export-worker.ts');
