import { defineConfig } from 'vitest/config';

// The suites run in Node against the real wasm build (web/wasm, produced by `cmake --build build/wasm-release`).
export default defineConfig({
  test: {
    environment: 'node',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
