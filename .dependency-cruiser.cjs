// The layering of docs/architecture.md, checked by `npm run lint` (dependency-cruiser): no import
// circle, no import up a floor, and workflow code that reaches contracts and workflow code only.
// Type-only imports count: a type says what a module knows as much as a value does.

/**
 * The floors, from the ground up. A folder may import its own files and the folders listed before
 * it, never one listed after it. Inside a floor the order is the one the features have today.
 */
const FLOORS = [
  // ground: pure helpers, no I/O of ours
  ['src/shared', 'src/time', 'src/mail', 'src/generated'],
  // services: our infrastructure and the clients of the world outside
  ['src/db', 'src/temporal', 'src/metrics', 'src/gmail', 'src/imap', 'src/llm', 'src/quota', 'src/outbound'],
  // features, each above the ones it uses
  ['src/accounts', 'src/retention', 'src/actions', 'src/agent', 'src/reminders', 'src/rules', 'src/learning', 'src/thread', 'src/backfill', 'src/sync', 'src/schedules', 'src/cleanup'],
  // composition: environment into settings, processes, surfaces
  ['src/config', 'src/workflows', 'src/codec-server', 'src/operations', 'src/mcp', 'src/http', 'src/cli', 'src/workers', 'src/dev', 'src/stack'],
];

const folders = FLOORS.flat();
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const under = (list) => `^(${list.map(escapeRegExp).join('|')})/`;

const upward = folders.slice(0, -1).map((folder, i) => ({
  name: `no-import-up-from-${folder.replace('src/', '')}`,
  comment: `${folder} stands below ${folders.slice(i + 1).join(', ')} (docs/architecture.md): it may not import them`,
  severity: 'error',
  from: { path: `^${escapeRegExp(folder)}/` },
  to: { path: under(folders.slice(i + 1)) },
}));

/** Contracts: the types, signals and small pure values a feature's workflows and clients agree on. */
const CONTRACT = '(^|/)(contracts|activity-contracts|signals)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop: one of them knows a higher one (docs/architecture.md)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'src-not-from-outside',
      comment: 'The product does not import the emulators, the local mail servers, benches, scripts or tests (the dev command and the stack run the bundled emulators; the dev command the local Dovecot and Postfix)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(dev|stack)/' },
      to: { path: '^(emulators|mail-servers|bench|scripts|test)/' },
    },
    {
      name: 'workflow-code-reaches-no-implementation',
      comment:
        'Workflow code (what src/workflows/index.ts bundles) imports contracts and workflow code only: never an activity implementation, a registry, a store or an I/O client, not even as a type',
      severity: 'error',
      from: { path: '^src/workflows/index\\.ts$' },
      to: {
        reachable: true,
        path: [
          '-activities\\.ts$',
          '^src/(workers|config|cli|http|dev|stack|codec-server|db|generated|metrics|quota)/',
          '^src/gmail/(client|gmail-service|errors|mime|addresses)\\.ts$',
          '^src/llm/(client|guard|breaker-store|classify|draft|prompts)\\.ts$',
          '^src/actions/(journal|policy)\\.ts$',
          '(^|/)node_modules/(googleapis|google-auth-library|@anthropic-ai|@prisma|pg|email-addresses)/',
        ],
      },
    },
    {
      name: 'test-allowance-only-outside-src',
      comment: "The one-click client's loopback allowance is for tests and benches: no product module may build one",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/outbound/one-click\\.ts$' },
      to: { path: '^src/outbound/test-allowance\\.ts$' },
    },
    {
      name: 'contracts-import-contracts',
      comment: "A feature's contracts come first: they import other contracts and the ground floor, nothing that implements",
      severity: 'error',
      from: { path: `^src/.*${CONTRACT}` },
      to: { path: '^src/', pathNot: [CONTRACT, under(FLOORS[0]), '^src/gmail/system-labels\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.cjs', '.json'] },
  },
};
