// The demo's benchmark page (`?bench`) in Debian Chromium, and its native twin (bench/parity_bench) on the same
// workloads (web/demo/src/bench/workloads.json): prints browser and native throughput side by side with their ratio
// at each thread count and records them in build/browser-bench.json. Figures are recorded, never asserted: this
// checks that the page runs, on the threads it should (every core up to 8 when cross-origin isolated), and reports
// numbers that make sense (finite, > 0).
//
//   npm run build --workspace web/demo && node web/demo/e2e/bench.e2e.mjs [--simd128] [--rounds N]
//
// --simd128 times the SIMD128 modules (the page's `?bench&simd=simd128`) instead of the relaxed-SIMD ones Chromium
// gets by default; build/browser-bench.json (or browser-bench-simd128.json) records which ran.
// --rounds N (default 1) alternates the page and the native twin N times and prints the median of each cell with its
// range, and the median of each round's ratios: on a VM whose speed moves by a third within minutes, a ratio of two
// figures taken minutes apart says more about the VM than about the code.
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
const args = process.argv.slice(2);
const simd128 = args.includes('--simd128');
let rounds = 1;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--simd128') continue;
  if (args[i] === '--rounds' && /^[1-9]\d*$/.test(args[i + 1] ?? '')) rounds = Number(args[++i]);
  else {
    console.error(`error: unknown or incomplete argument ${args[i]} (usage: bench.e2e.mjs [--simd128] [--rounds N])`);
    process.exit(2);
  }
}

// Threads need a cross-origin-isolated page: served here with the COOP/COEP headers, as `npm start` serves it.
const isolated = process.env.DEMO_URL ? process.env.DEMO_EXPECT_ISOLATED === '1' : true;

// One round: the page, then the native twin, after Chromium has closed, so that neither competes for the cores.
async function round() {
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
  if (!result) return null;
  check(existsSync(NATIVE), `${NATIVE} is missing: build the native benches (npm run build)`);
  result.native = JSON.parse(
    execFileSync(
      NATIVE,
      ['--workloads', WORKLOADS, '--models', join(repoRoot, 'data/models'), '--threads', result.expected.join(',')],
      { encoding: 'utf8' },
    ),
  );
  for (const b of result.browser.rows) {
    const n = result.native.rows.find((r) => r.threads === b.threads);
    check(n && n.peak_rss_bytes > 0, `native peak RSS ${n?.peak_rss_bytes} at ${b.threads} threads`);
  }
  return result;
}

const median = (values) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
// A cell over the rounds: the value itself for one round; else the median, and the range.
const cell = (values, digits, unit = '') =>
  values.length === 1
    ? `${values[0].toFixed(digits)}${unit}`
    : `${median(values).toFixed(digits)}${unit} (${Math.min(...values).toFixed(digits)}-` +
      `${Math.max(...values).toFixed(digits)})`;

const results = [];
for (let r = 0; r < rounds && process.exitCode !== 1; ++r) {
  if (rounds > 1) log(`round ${r + 1} of ${rounds}`);
  try {
    const result = await round();
    if (result) results.push(result);
  } catch (e) {
    console.error(`bench e2e: FAIL: ${e.message}`);
    process.exitCode = 1;
  }
}

if (results.length === rounds) {
  const { cores, expected } = results[0];
  const native = (res, threads) => res.native.rows.find((r) => r.threads === threads);
  const browser = (res, threads) => res.browser.rows.find((r) => r.threads === threads);
  const lines = ['| threads | workload | browser (wasm) | native | browser / native |', '|---|---|---|---|---|'];
  const table = [];
  for (const threads of expected) {
    for (const [key, label] of KEYS) {
      const b = results.map((res) => browser(res, threads)[key]);
      const n = results.map((res) => native(res, threads)[key]);
      const ratios = b.map((v, i) => v / n[i]);
      table.push({ threads, workload: key, browser: median(b), native: median(n), ratio: median(ratios), ratios });
      lines.push(`| ${threads} | ${label} | ${cell(b, 0)} | ${cell(n, 0)} | ${cell(ratios, 2, 'x')} |`);
    }
  }
  // Peak memory of each row: the wasm memory the instance grew to (it never shrinks) and the native process's peak
  // resident set (VmHWM, reset per row; it includes the executable and its shared libraries).
  const memory = [];
  for (const threads of expected) {
    const wasmMb = Math.max(...results.map((res) => browser(res, threads).wasm_memory_bytes / 2 ** 20));
    const rssMb = Math.max(...results.map((res) => native(res, threads).peak_rss_bytes / 2 ** 20));
    memory.push({ threads, wasm_memory_mb: wasmMb, native_peak_rss_mb: rssMb });
    lines.push(`| ${threads} | peak memory (MB) | ${wasmMb.toFixed(0)} | ${rssMb.toFixed(0)} | |`);
  }
  if (expected.length > 1) {
    const many = expected[expected.length - 1];
    for (const [key, label] of KEYS) {
      const b = results.map((res) => browser(res, many)[key] / browser(res, 1)[key]);
      const n = results.map((res) => native(res, many)[key] / native(res, 1)[key]);
      lines.push(`| ${many} vs 1 | ${label} | ${cell(b, 2, 'x')} | ${cell(n, 2, 'x')} | |`);
    }
  }
  console.log(lines.join('\n'));
  mkdirSync(join(repoRoot, 'build'), { recursive: true });
  const out = simd128 ? 'browser-bench-simd128.json' : 'browser-bench.json';
  const last = results[results.length - 1];
  writeFileSync(
    join(repoRoot, 'build', out),
    JSON.stringify(
      {
        cores,
        rounds,
        browser: last.browser,
        native: last.native,
        rounds_raw: results.map((res) => ({ browser: res.browser.rows, native: res.native.rows })),
        table,
        memory,
      },
      null,
      2,
    ) + '\n',
  );
  log(`figures in build/${out} (Chromium ${last.browser.userAgent}, ${last.browser.rows[0].simd}, ${rounds} round(s))`);
}
