import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Every log line the suite makes is checked for a key twice in one object (test/support/log-lines.ts).
    setupFiles: ['test/support/log-lines.setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
  },
});
