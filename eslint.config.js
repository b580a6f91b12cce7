// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/out/**', 'test-artifacts/**', 'src/dashboard/vendor/**', 'dist-dashboard/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules: the project service gives each file the types of its own tsconfig.
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test() and describe() return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // A module adds its tables to the database type with `interface Database extends XTables {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    // One logger: the runtime builds the only pino root (src/platform/logger.ts); modules take a child of it.
    files: ['src/**/*.ts'],
    ignores: ['src/platform/logger.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'pino', allowTypeImports: true, message: 'Take the runtime logger (a log.child({ module }) in your deps), not a new pino root.' }] }],
      'no-restricted-properties': ['error', { object: 'process', property: 'emitWarning', message: 'Log through the runtime logger.' }],
    },
  },
  {
    // The traffic simulator is a client of the server: the SDK, public types, and the media layout it writes into.
    files: ['src/simulator/**/*.ts'],
    ignores: ['src/simulator/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'pino', allowTypeImports: true, message: 'Take the runtime logger (a log.child({ module }) in your deps), not a new pino root.' }],
        patterns: [{
          group: ['**/modules/**', '**/runtime.js', '**/app.js', '**/server.js', '**/platform/*', '!**/platform/media'],
          allowTypeImports: true,
          message: 'The simulator reaches the server only through the SDK (src/client) and public types; it writes media through src/platform/media.',
        }],
      }],
    },
  },
  {
    files: ['eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
