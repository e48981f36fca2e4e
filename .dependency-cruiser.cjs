// The import rules of src/ (npm run lint): lower rooms never import a feature, nothing imports in a
// circle (type-only imports included), the dashboard never imports the server. See docs/ARCHITECTURE.md.
const LOWER =
  '^src/server/(db|auth|http|outbound|jobs|distribution|events|privacy|geo|secrets)/|^src/server/(config|types|time|version|licence-key)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other in a loop (type-only imports count too).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'lower-rooms-import-no-feature',
      severity: 'error',
      comment:
        'db/, auth/, http/, outbound/, jobs/, distribution/, events/, privacy/, geo/, secrets/ and the top-level files below app.ts are beneath the features: they must not import src/server/modules/. Features register with them (app.ts wires it).',
      from: { path: LOWER, pathNot: '\\.test\\.ts$' },
      to: { path: '^src/server/modules/' },
    },
    {
      name: 'web-imports-no-server',
      severity: 'error',
      comment: 'The dashboard talks to the server only over HTTP (src/web/api/client.ts).',
      from: { path: '^src/web/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'server-imports-no-tests',
      severity: 'error',
      comment: 'Running code never imports a test or a test helper.',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: '\\.test\\.ts$|^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/web/api/schema\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs'],
    },
    combinedDependencies: false,
  },
};
