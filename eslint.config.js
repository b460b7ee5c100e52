// Lint over src (`npm run lint`, part of `npm test`): only what the type checker cannot see. Chiefly, no
// promise is left floating, `void` included: a rejection nobody handles ends the process (or vanishes), so
// each promise is awaited, returned, or given a handler that logs (docs/design.md "Layers").
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig({
  files: ['src/**/*.ts'],
  extends: [tseslint.configs.base],
  languageOptions: {
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  rules: {
    '@typescript-eslint/no-floating-promises': ['error', { checkThenables: true, ignoreVoid: false }],
    // An async function where a callback's return is ignored (an event listener, a timer) floats too.
    '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
  },
});
