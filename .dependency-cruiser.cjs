// @ts-check
/**
 * Module boundaries (docs/style.md rule 14, docs/design.md §5), checked by `npm run lint` (depcruise src libs).
 * - a module imports another module only along a reviewed arrow of docs/module-graph.json (drawn in
 *   docs/architecture.md); a module missing from that list imports no other module;
 * - no cycles, type-only imports included;
 * - a module's public face is its index.ts: another module (or core, or the composition root) imports
 *   `@modules/<name>` and never a file behind it; tests (*.spec.ts) may reach internals;
 * - core/ and libs/ never import modules/; libs/contracts imports nothing of ours;
 * - nothing imports an edge (gateway, mcp-server, acp) except the composition root (src/*.ts) that mounts it;
 * - Fastify only in controllers, core/http and the edges;
 * - no entity crosses a module: an index.ts never re-exports an *.entity.ts (aliases are caught by
 *   test/lint/entity-exports.mjs, which reads types).
 */
const graph = require('./docs/module-graph.json');

const EDGES = `(${graph.edges.join('|')})`;
const NOT_TEST = '\\.(spec|int-spec|e2e-spec)\\.ts$';
const MODULES = Object.keys(graph.modules);

/** One rule per module: the modules it may import are itself and the targets of its reviewed arrows. */
const reviewedArrows = MODULES.map((name) => {
  const targets = Object.keys(graph.modules[name].imports);
  return {
    name: 'module-arrow-not-reviewed',
    severity: 'error',
    comment: `${name} imports ${targets.join(', ') || 'no other module'} (docs/module-graph.json): a new arrow is reviewed there first, with why.`,
    from: { path: `^src/modules/${name}/`, pathNot: NOT_TEST },
    to: { path: '^src/modules/[^/]+/', pathNot: `^src/modules/(${[name, ...targets].join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    ...reviewedArrows,
    {
      name: 'module-not-in-graph',
      severity: 'error',
      comment: 'A module missing from docs/module-graph.json imports no other module: add it there, with its reviewed arrows.',
      from: { path: '^src/modules/([^/]+)/', pathNot: [`^src/modules/(${MODULES.join('|')})/`, NOT_TEST] },
      to: { path: '^src/modules/', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle between files (type-only imports count): fix the boundary instead of hiding it.',
      from: { path: '^(src|libs)/' },
      to: { circular: true },
    },
    {
      name: 'no-deep-import',
      severity: 'error',
      comment: 'Import another module through its index.ts (`@modules/<name>`), never a file behind it.',
      from: { path: '^src/modules/([^/]+)/', pathNot: NOT_TEST },
      to: { path: '^src/modules/[^/]+/.+', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'no-deep-import-from-root',
      severity: 'error',
      comment: 'The composition root (src/*.ts) imports modules through their index.ts too.',
      from: { path: '^src/[^/]+\\.ts$', pathNot: NOT_TEST },
      to: { path: '^src/modules/[^/]+/.+', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'contracts-import-nothing-of-ours',
      severity: 'error',
      comment: 'libs/contracts is the wire vocabulary clients share: it imports nothing of ours.',
      from: { path: '^libs/contracts/' },
      to: { path: '^(src|libs)/', pathNot: '^libs/contracts/' },
    },
    {
      name: 'no-core-to-modules',
      severity: 'error',
      comment: 'core/ and libs/ never import modules/.',
      from: { path: '^(src/core|libs)/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-importing-edges',
      severity: 'error',
      comment: 'Nothing imports an edge (gateway, mcp-server, acp); only the composition root mounts it.',
      from: { path: '^src/(core|modules)/', pathNot: [`^src/modules/${EDGES}/`, NOT_TEST] },
      to: { path: `^src/modules/${EDGES}/` },
    },
    {
      name: 'fastify-only-at-the-edge',
      severity: 'error',
      comment: 'Fastify types and APIs stay in controllers, core/http and the edges.',
      from: {
        path: '^src/',
        pathNot: ['\\.controller\\.ts$', '^src/core/http/', `^src/modules/${EDGES}/`, '^src/main[^/]*\\.ts$', '^src/bootstrap\\.ts$', NOT_TEST],
      },
      to: { path: '(^|/)node_modules/(fastify|@fastify/[^/]+|@nestjs/platform-fastify)/' },
    },
    {
      name: 'no-entity-in-public-face',
      severity: 'error',
      comment: "A module's index.ts never exports an entity: other modules get plain types from its services.",
      from: { path: '^src/modules/[^/]+/index\\.ts$' },
      to: { path: '\\.entity\\.ts$' },
    },
    {
      name: 'no-foreign-entity',
      severity: 'error',
      comment: "Reach another module's tables only through its exported service (DESIGN §5).",
      from: { path: '^src/modules/([^/]+)/', pathNot: NOT_TEST },
      to: { path: '^src/modules/([^/]+)/.+\\.entity\\.ts$', pathNot: '^src/modules/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|\\.dist-[^/]*|coverage|\\.data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.json'] },
    combinedDependencies: false,
  },
};
