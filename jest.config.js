// One Jest invocation runs every project; `npm test` builds first because e2e tests spawn dist/.
const transform = {
  '^.+\\.(t|j)sx?$': [
    '@swc/jest',
    {
      jsc: {
        target: 'es2022',
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        keepClassNames: true,
      },
      module: { type: 'commonjs' },
      sourceMaps: 'inline',
    },
  ],
};
const moduleNameMapper = {
  '^@core/(.*)$': '<rootDir>/src/core/$1',
  '^@modules/(.*)$': '<rootDir>/src/modules/$1',
  '^@contracts$': '<rootDir>/libs/contracts/src/index.ts',
  '^@contracts/(.*)$': '<rootDir>/libs/contracts/src/$1',
  '^@sdk$': '<rootDir>/libs/sdk/src/index.ts',
  '^@sdk/(.*)$': '<rootDir>/libs/sdk/src/$1',
  '^@migrations$': '<rootDir>/migrations/index.ts',
};
// @nestjs/common and @nestjs/core 12 ship ESM only: compile them to CommonJS like our sources, so tests import
// the real packages (services a test constructs by hand keep their real decorators).
const transformIgnorePatterns = ['/node_modules/(?!@nestjs/(common|core|terminus)/)'];
const base = { rootDir: __dirname, transform, transformIgnorePatterns, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  testSequencer: '<rootDir>/test/setup/sequencer.cjs',
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/test/helm/**/*.spec.ts',
        '<rootDir>/test/lint/**/*.spec.ts',
        '<rootDir>/test/support/**/*.spec.ts',
      ],
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
      setupFiles: ['<rootDir>/test/setup/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/timeouts.ts', '<rootDir>/test/setup/quiet-logs.ts'],
    },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/setup/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/timeouts-e2e.ts'],
    },
  ],
};
