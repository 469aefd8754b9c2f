import { defineConfig } from 'vitest/config';
import { relaxedSimdSupported } from './src/simd.js';

// The suites run in Node against the real wasm build (web/wasm, produced by `cmake --build build/wasm-release`).
//
// test/relaxed-simd.test.ts runs the relaxed-SIMD modules, which Node 20 validates only with a V8 flag: it is its
// own project, whose workers get the flag (none where this Node runs relaxed SIMD without it).
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
const relaxedExecArgv = relaxedSimdSupported() ? [] : [RELAXED_FLAG];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/relaxed-simd.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'relaxed-simd',
          environment: 'node',
          include: ['test/relaxed-simd.test.ts'],
          execArgv: relaxedExecArgv,
          testTimeout: 30_000,
        },
      },
    ],
  },
});
