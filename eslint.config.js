// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import { workflowBundleFiles } from './scripts/workflow-bundle-files.js';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.cache', '.data', 'src/generated', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
    },
  },
  {
    files: ['.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no activity
    // implementations. The files are the ones the workflow bundle includes, derived from its entry.
    files: workflowBundleFiles(),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code cannot use Node built-ins.' })),
          patterns: [
            { group: ['**/*-activities', '**/*-activities.js'], message: "Workflow code imports contracts only: the feature's activity-contracts.ts (docs/architecture.md)." },
            { group: ['@temporalio/worker', '@temporalio/client', '@temporalio/activity', '@prisma/*', 'googleapis', '@anthropic-ai/sdk', 'pg'], message: 'Not allowed in workflow code.' },
            {
              group: ['zod', 'zod/*'],
              allowTypeImports: true,
              message: 'The sandbox evaluates workflow modules again for every run, schemas built at module scope included: plain checks (src/shared/plain-checks.ts) in workflow code (docs/performance.md).',
            },
          ],
        },
      ],
    },
  },
);
