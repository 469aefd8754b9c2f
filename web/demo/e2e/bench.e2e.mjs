// The demo's benchmark page (`?bench`) in Debian Chromium, and its native twin (bench/parity_bench) on the same
// workloads (web/demo/src/bench/workloads.json): prints browser and native throughput side by side with their ratio
// at each thread count and records them in build/browser-bench.json. Figures are recorded, never asserted: this
// checks that the page runs, on the threads it should (every core up to 8 when cross-origin isolated), and reports
// numbers that make sense (finite, > 0).
//
//   npm run build --workspace web/demo && node web/demo/e2e/bench.e2e.mjs [--simd128]
//
// --simd128 times the SIMD128 modules (the page's `?bench&simd=simd128`) instead of the relaxed-SIMD ones Chromium
// gets by default; build/browser-bench.json (or browser-bench-simd128.json) records which ran.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, runDemoTest } from './harness.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const NATIVE = join(repoRoot, 'build/native-release/bin/parity_bench');
const WORKLOADS = join(repoRoot, 'web/demo/src/bench/workloads.json');
const KEYS = [
  ['sinkhorn_problems_per_s', 'Sinkhorn problems/s'],
  ['otke_sequences_per_s', 'OTKE sequences/s'],
  ['graphit_molecules_per_s', 'GraphiT molecules/s'],
];
const log = (msg) => console.log(`bench e2e: ${msg}`);
const simd128 = process.argv.includes('--simd128');

// Threads need a cross-origin-isolated page: served here with the COOP/COEP headers, as `npm start` serves it.
const isolated = process.env.DEMO_URL ? process.env.DEMO_EXPECT_ISOLATED === '1' : true;

// The native twin runs after Chromium has closed, so neither competes with the other for the cores.
let result = null;
await runDemoTest({
  name: 'bench e2e',
  shot: 'demo-bench-failure.png',
  timeoutMs: 240_000,
  isolated,
  body: async ({ page, url }) => {
    await page.goto(`${url}?bench${simd128 ? '&simd=simd128' : ''}`);
    await page.waitForSelector('body[data-bench-done]');
    const status = await page.textContent('[data-testid="bench-status"]');
    check((await page.getAttribute('body', 'data-bench-done')) === 'ok', `the benchmark failed: ${status}`);
    const browser = JSON.parse(await page.textContent('[data-testid="bench-json"]'));
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    const expected = isolated && cores > 1 ? [1, Math.min(cores, 8)] : [1];
    check(
      JSON.stringify(browser.rows.map((r) => r.threads)) === JSON.stringify(expected),
      `rows for ${browser.rows.map((r) => r.threads)} threads, expected ${expected}`,
    );
    // Chromium validates relaxed SIMD (114+): by default the relaxed modules run.
    for (const row of browser.rows)
      check(
        row.simd === (simd128 ? 'wasm-simd128' : 'wasm-relaxed-simd'),
        `the ${row.threads}-thread row ran ${row.simd}`,
      );
    for (const row of browser.rows) {
      for (const [key] of [...KEYS, ['wasm_memory_bytes']])
        check(Number.isFinite(row[key]) && row[key] > 0, `${key} = ${row[key]} at ${row.threads} threads`);
    }
    browser.userAgent = await page.evaluate(() => navigator.userAgent.match(/Chrom[a-z]*\/[\d.]+/)?.[0]);
    result = { browser, cores, expected };
  },
});

if (result) {
  const { browser, cores, expected } = result;
  try {
    check(existsSync(NATIVE), `${NATIVE} is missing: build the native benches (npm run build)`);
    const native = JSON.parse(
      execFileSync(
        NATIVE,
        ['--workloads', WORKLOADS, '--models', join(repoRoot, 'data/models'), '--threads', expected.join(',')],
        { encoding: 'utf8' },
      ),
    );
    const lines = ['| threads | workload | browser (wasm) | native | browser / native |', '|---|---|---|---|---|'];
    const table = [];
    for (const b of browser.rows) {
      const n = native.rows.find((r) => r.threads === b.threads);
      for (const [key, label] of KEYS) {
        const ratio = b[key] / n[key];
        table.push({ threads: b.threads, workload: key, browser: b[key], native: n[key], ratio });
        lines.push(`| ${b.threads} | ${label} | ${b[key].toFixed(0)} | ${n[key].toFixed(0)} | ${ratio.toFixed(2)}x |`);
      }
    }
    // Peak memory of each row: the wasm memory the instance grew to (it never shrinks) and the native process's peak
    // resident set (VmHWM, reset per row; it includes the executable and its shared libraries).
    const memory = [];
    for (const b of browser.rows) {
      const n = native.rows.find((r) => r.threads === b.threads);
      check(n.peak_rss_bytes > 0, `native peak RSS ${n.peak_rss_bytes} at ${b.threads} threads`);
      const [wasmMb, rssMb] = [b.wasm_memory_bytes / 2 ** 20, n.peak_rss_bytes / 2 ** 20];
      memory.push({ threads: b.threads, wasm_memory_mb: wasmMb, native_peak_rss_mb: rssMb });
      lines.push(`| ${b.threads} | peak memory (MB) | ${wasmMb.toFixed(0)} | ${rssMb.toFixed(0)} | |`);
    }
    if (browser.rows.length > 1) {
      const [one, many] = browser.rows;
      const [nOne, nMany] = [native.rows[0], native.rows[native.rows.length - 1]];
      for (const [key, label] of KEYS) {
        lines.push(
          `| ${many.threads} vs 1 | ${label} | ${(many[key] / one[key]).toFixed(2)}x | ` +
            `${(nMany[key] / nOne[key]).toFixed(2)}x | |`,
        );
      }
    }
    console.log(lines.join('\n'));
    mkdirSync(join(repoRoot, 'build'), { recursive: true });
    const out = simd128 ? 'browser-bench-simd128.json' : 'browser-bench.json';
    writeFileSync(
      join(repoRoot, 'build', out),
      JSON.stringify({ cores, browser, native, table, memory }, null, 2) + '\n',
    );
    log(`figures in build/${out} (Chromium ${browser.userAgent}, ${browser.rows[0].simd})`);
  } catch (e) {
    console.error(`bench e2e: FAIL: ${e.message}`);
    process.exitCode = 1;
  }
}
