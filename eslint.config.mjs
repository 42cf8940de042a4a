// @ts-check
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * ESLint keeps the syntax-level rules: no `forwardRef` (docs/style.md rule 14) and path aliases instead of `../../../`.
 * Module boundaries (cycles, index.ts faces, core -> modules, edges, Fastify, entities) are dependency-cruiser's
 * (`.dependency-cruiser.cjs`) and test/lint/entity-exports.mjs, both run by `npm run lint`.
 */
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
  {
    ignores: [
      'dist/**',
      '.dist-*/**',
      'node_modules/**',
      'coverage/**',
      'helm/**',
      '.data/**',
      'test/support/fake-upstream/*.js',
      'bench/results/**',
      'libs/sdk/dist/**',
      'libs/sdk/src/generated/**',
    ],
  },
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
    // core/ reads the root package.json (version) by a relative path: no alias reaches outside src/.
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [forwardRefImport] }] },
  },
  {
    // The operator console runs in the browser (web/, built by Vite): browser globals and React's rules of hooks.
    files: ['web/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // Type-aware: a promise nobody awaits, catches or marks `void` loses its error (docs/style.md, "Size and clarity").
    files: ['src/**/*.ts', 'libs/**/*.ts', 'web/**/*.{ts,tsx}'],
    ignores: ['**/*.spec.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
