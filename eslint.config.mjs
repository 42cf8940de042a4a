// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Boundaries (STYLE rule 14) are enforced here:
 * - no `forwardRef` anywhere;
 * - `src/core/**` never imports `@modules/*`;
 * - a module never imports another module's repository or entity (only its exported services).
 * The cross-module rule is generated per module folder so "another" is exact.
 */
const MODULES = [
  'system',
  'providers',
  'gateway',
  'usage',
  'chat-sessions',
  'live-sessions',
  'agent-chat',
  'tasks',
  'approvals',
  'events',
  'agent-adapters',
  'mcp',
];

const forwardRefImport = {
  name: '@nestjs/common',
  importNames: ['forwardRef'],
  message: 'forwardRef hides a module cycle: fix the boundary instead (STYLE rule 14).',
};

const forwardRefBan = {
  selector: "CallExpression[callee.name='forwardRef']",
  message: 'forwardRef hides a module cycle: fix the boundary instead (STYLE rule 14).',
};

export default tseslint.config(
  { ignores: ['dist/**', '.dist-*/**', 'node_modules/**', 'coverage/**', 'helm/**', '.data/**', 'test/support/fake-upstream/*.js', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': ['error', forwardRefBan],
      'no-restricted-imports': [
        'error',
        { paths: [forwardRefImport], patterns: [{ group: ['../../../*'], message: 'Use a path alias (@core, @modules, @contracts).' }] },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts', 'libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [forwardRefImport],
          patterns: [{ group: ['@modules/*', '**/modules/**'], message: 'core/ and libs/ never import modules/ (STYLE rule 14).' }],
        },
      ],
    },
  },
  ...MODULES.map((name) => ({
    files: [`src/modules/${name}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [forwardRefImport],
          patterns: [
            {
              regex: `^@modules/(?!${name}/).+\\.(repository|entity)$`,
              message: "Reach another module's tables only through its exported service (DESIGN §5).",
            },
            { group: ['../../../*'], message: 'Use a path alias (@core, @modules, @contracts).' },
          ],
        },
      ],
    },
  })),
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
