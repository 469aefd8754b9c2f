// The npm package as people install it: `npm pack` web/, install the tarball into fresh projects outside the
// repository and use it there, as (a) a Node ESM script, (b) a Vite app running it in a module Worker (vite build,
// then Chromium), (c) a strict TypeScript project checked against the shipped .d.ts, (d) a CommonJS script.
// Also reports the size budget (packed, wasm raw/gzip, JS) into build/package-size.json.
//
// Needs: web/dist and web/wasm built (npm run build), the workspace's vite, typescript and playwright-core.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const webDir = join(repoRoot, 'web');
const otkeModel = join(repoRoot, 'data', 'models', 'otke-promoters-ecoli.safetensors');
const graphitModel = join(repoRoot, 'data', 'models', 'graphit-mutag.safetensors');
const failures = [];
const log = (msg) => console.log(`package: ${msg}`);

function check(condition, message) {
  if (!condition) throw new Error(message);
}

// PACKAGE_ONLY=text runs only the steps whose name contains text (the tarball is packed either way).
async function step(name, body) {
  if (process.env.PACKAGE_ONLY && !name.includes(process.env.PACKAGE_ONLY)) return;
  try {
    await body();
    log(`PASS ${name}`);
  } catch (e) {
    failures.push(name);
    console.error(`package: FAIL ${name}: ${e?.stack ?? e}`);
  }
}

function run(cmd, args, cwd, { allowFailure = false } = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  if (!allowFailure && r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

// A fresh project: the consumer's files copied into a temporary folder, and the tarball installed there.
function project(name, tarball) {
  const dir = mkdtempSync(join(tmpdir(), `inductive-consumer-${name}-`));
  cpSync(join(here, 'consumers', name), dir, { recursive: true });
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], dir);
  return dir;
}

function lastJsonLine(text) {
  const line = text.trim().split('\n').pop() ?? '';
  return JSON.parse(line);
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

const scratch = mkdtempSync(join(tmpdir(), 'inductive-pack-'));
const projects = [];
try {
  // npm pack prints the tarball's name; --json also lists its files and sizes.
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: webDir, encoding: 'utf8' }),
  )[0];
  const tarball = join(scratch, packed.filename);
  const inPackage = packed.files.map((f) => f.path);

  await step('the tarball holds what users need and nothing else', () => {
    for (const needed of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'wasm/inductive.mjs',
      'wasm/inductive.wasm',
      'wasm/inductive.d.mts',
      'wasm/inductive-mt.mjs',
      'wasm/inductive-mt.wasm',
      'wasm/inductive-mt.worker.js',
      'wasm/inductive-mt.d.mts',
      'wasm/inductive-relaxed.mjs',
      'wasm/inductive-relaxed.wasm',
      'wasm/inductive-relaxed.d.mts',
      'wasm/inductive-mt-relaxed.mjs',
      'wasm/inductive-mt-relaxed.wasm',
      'wasm/inductive-mt-relaxed.worker.js',
      'wasm/inductive-mt-relaxed.d.mts',
    ]) {
      check(inPackage.includes(needed), `${needed} is missing from the tarball`);
    }
    const stray = inPackage.filter((f) => /(^|\/)(test|tests|e2e)\/|\.test\.|\.map$|tsbuildinfo|^src\//.test(f));
    check(stray.length === 0, `files a user does not need are packed: ${stray.join(', ')}`);
  });

  const wasmBytes = readFileSync(join(webDir, 'wasm', 'inductive.wasm'));
  const threadedWasmBytes = readFileSync(join(webDir, 'wasm', 'inductive-mt.wasm'));
  const relaxedWasmBytes = readFileSync(join(webDir, 'wasm', 'inductive-relaxed.wasm'));
  const relaxedThreadedWasmBytes = readFileSync(join(webDir, 'wasm', 'inductive-mt-relaxed.wasm'));
  const jsFiles = inPackage.filter((f) => /\.(m?js)$/.test(f));
  const jsBytes = jsFiles.reduce((s, f) => s + statSync(join(webDir, f)).size, 0);
  const jsGzip = jsFiles.reduce((s, f) => s + gzipSync(readFileSync(join(webDir, f)), { level: 9 }).length, 0);
  const size = {
    packed_bytes: packed.size,
    unpacked_bytes: packed.unpackedSize,
    files: packed.entryCount,
    wasm_bytes: wasmBytes.length,
    wasm_gzip_bytes: gzipSync(wasmBytes, { level: 9 }).length,
    threaded_wasm_bytes: threadedWasmBytes.length,
    threaded_wasm_gzip_bytes: gzipSync(threadedWasmBytes, { level: 9 }).length,
    relaxed_wasm_bytes: relaxedWasmBytes.length,
    relaxed_threaded_wasm_bytes: relaxedThreadedWasmBytes.length,
    js_bytes: jsBytes,
    js_gzip_bytes: jsGzip,
    js_files: jsFiles.length,
  };
  mkdirSync(join(repoRoot, 'build'), { recursive: true });
  writeFileSync(join(repoRoot, 'build', 'package-size.json'), JSON.stringify(size, null, 2) + '\n');
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
  log(
    `size: packed ${kb(size.packed_bytes)} (${size.files} files, ${kb(size.unpacked_bytes)} unpacked); ` +
      `wasm ${kb(size.wasm_bytes)} raw, ${kb(size.wasm_gzip_bytes)} gzip; ` +
      `JS ${kb(size.js_bytes)} raw, ${kb(size.js_gzip_bytes)} gzip in ${size.js_files} files`,
  );

  await step('(a) a Node ESM script', () => {
    const dir = project('node-esm', tarball);
    projects.push(dir);
    const r = lastJsonLine(run('node', ['main.mjs', otkeModel], dir).stdout);
    check(
      r.simd === (r.relaxedSupported ? 'wasm-relaxed-simd' : 'wasm-simd128'),
      `simd: ${r.simd} where relaxed SIMD is ${r.relaxedSupported ? '' : 'not '}supported`,
    );
    check(r.planError < 1e-5 && r.converged, `2x2 plan vs the closed form: error ${r.planError}`);
    check(JSON.stringify(r.labels) === '["promoter"]', `labels ${JSON.stringify(r.labels)}`);
    check(Math.abs(r.probabilitySum - 1) < 1e-5, `probabilities sum to ${r.probabilitySum}`);
    check(r.errorCode === 'shape_mismatch', `a 3-value cost for 2 x 2 gave ${r.errorCode}`);
    // Node 20 validates relaxed SIMD only behind a V8 flag: with it, the same script loads inductive-relaxed.
    const flag = '--experimental-wasm-relaxed-simd';
    if (!r.relaxedSupported && spawnSync('node', [flag, '-e', '0']).status === 0) {
      const f = lastJsonLine(run('node', [flag, 'main.mjs', otkeModel], dir).stdout);
      check(f.relaxedSupported && f.simd === 'wasm-relaxed-simd', `with ${flag}: simd ${f.simd}`);
      check(f.planError < 1e-5 && f.converged, `relaxed: 2x2 plan vs the closed form: error ${f.planError}`);
      const gap = Math.max(...f.probabilities.map((p, i) => Math.abs(p - r.probabilities[i])));
      check(gap < 1e-5, `relaxed and SIMD128 probabilities differ by ${gap}`);
      log(`(a) with ${flag}: wasm-relaxed-simd, probabilities within ${gap.toExponential(1)} of SIMD128's`);
    }
  });

  await step('web/README.md: every js block runs as written, and every method of the API has one', async () => {
    const dir = project('node-esm', tarball);
    projects.push(dir);
    for (const sub of ['models', 'promoters', 'screening', 'molecules']) {
      cpSync(join(repoRoot, 'data', sub), join(dir, 'data', sub), { recursive: true });
    }
    const readme = readFileSync(join(webDir, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    check(blocks.length >= 6, `only ${blocks.length} js blocks in web/README.md`);
    blocks.forEach((code, i) => {
      writeFileSync(join(dir, `readme-${i + 1}.mjs`), code);
      const r = run('node', [`readme-${i + 1}.mjs`], dir, { allowFailure: true });
      check(
        r.status === 0 && r.stderr === '',
        `web/README.md js block ${i + 1} (${code.split('\n')[0]}...) failed (exit ${r.status}):\n${r.stderr}`,
      );
    });
    // The reference is complete: each public method and property of the API classes appears in a runnable block.
    const api = await import(join(webDir, 'dist', 'index.js'));
    const ind = await api.init();
    const members = {
      Inductive: Object.getOwnPropertyNames(Object.getPrototypeOf(ind)),
      OtkeModel: Object.getOwnPropertyNames(api.OtkeModel.prototype),
      ScreeningDataset: Object.getOwnPropertyNames(api.ScreeningDataset.prototype),
      GraphitModel: Object.getOwnPropertyNames(api.GraphitModel.prototype),
    };
    const code = blocks.join('\n');
    const missing = Object.entries(members).flatMap(([cls, names]) =>
      names
        .filter((name) => name !== 'constructor')
        .filter((name) => !new RegExp(`\\.${name}\\b`).test(code))
        .map((name) => `${cls}.${name}`),
    );
    check(missing.length === 0, `no runnable web/README.md block uses ${missing.join(', ')}`);
    for (const codeName of [
      'invalid_argument',
      'shape_mismatch',
      'bad_model_file',
      'unsupported_version',
      'backend',
      'io',
      'internal',
      'cancelled',
      'out_of_memory',
    ]) {
      check(readme.includes(`| \`${codeName}\` |`), `the error table of web/README.md lacks ${codeName}`);
    }
    log(`web/README.md: ${blocks.length} js blocks ran; they use every method of ${Object.keys(members).join(', ')}`);
  });

  await step('(c) a strict TypeScript project type-checks against the shipped .d.ts', () => {
    const dir = project('typescript', tarball);
    projects.push(dir);
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const config of ['tsconfig.json', 'tsconfig.bundler.json']) {
      const r = run('node', [tsc, '-p', config], dir, { allowFailure: true });
      check(r.status === 0, `tsc -p ${config} failed:\n${r.stdout}${r.stderr}`);
    }
    // The check can fail: a type error in user code is reported against the package's types.
    writeFileSync(
      join(dir, 'main.ts'),
      readFileSync(join(dir, 'main.ts'), 'utf8').replace('// @ts-expect-error: the cost must be a Float32Array\n', ''),
    );
    const r = run('node', [tsc, '-p', 'tsconfig.json'], dir, { allowFailure: true });
    check(r.status !== 0 && /Float32Array/.test(r.stdout), `a number[] cost type-checked:\n${r.stdout}`);
  });

  await step('(d) a CommonJS consumer', () => {
    const dir = project('commonjs', tarball);
    projects.push(dir);
    const r = run('node', ['main.cjs'], dir, { allowFailure: true });
    check(r.status === 0, `require('inductive') failed (exit ${r.status}):\n${r.stderr}`);
    const out = lastJsonLine(r.stdout);
    check(Math.abs(out.planSum - 1) < 1e-4, `plan mass ${out.planSum}`);
    check(out.errorCode === 'invalid_argument', `eps -1 gave ${out.errorCode}`);
  });

  await step(
    '(e) memory stays flat in a Worker: 1000 + 1000 models loaded and disposed, 10^5 sequences embedded',
    () => {
      const dir = project('node-worker', tarball);
      projects.push(dir);
      const r = lastJsonLine(run('node', ['--expose-gc', 'main.mjs', otkeModel, graphitModel], dir).stdout);
      const mib = (n) => `${(n / 2 ** 20).toFixed(2)} MiB`;
      log(
        `memory: ${r.models} OTKE + ${r.models} GraphiT models in ${r.modelsSeconds.toFixed(1)} s: wasm ` +
          `${mib(r.modelsWasmGrowth)}, JS heap ${mib(r.modelsJsGrowth)} growth; ${r.sequences} sequences embedded in ` +
          `${r.embedSeconds.toFixed(1)} s: wasm ${mib(r.embedWasmGrowth)}, JS heap ${mib(r.embedJsGrowth)} growth ` +
          `(wasm memory ${mib(r.wasmBytes)}, JS heap ${mib(r.jsBytes)} at the end)`,
      );
      writeFileSync(join(repoRoot, 'build', 'package-memory.json'), JSON.stringify(r, null, 2) + '\n');
      check(r.gc && r.symbolDispose, 'the Worker had no gc() or no Symbol.dispose');
      // wasm memory grows in 64 KiB pages and never shrinks: a leak of one model (52 KiB of tensors alone) per
      // load would add ~50 MiB here. The JS bound leaves room for V8's own caches.
      check(r.modelsWasmGrowth <= 2 ** 20 && r.embedWasmGrowth <= 2 ** 20, 'wasm memory grew by more than 1 MiB');
      check(r.modelsJsGrowth <= 4 * 2 ** 20 && r.embedJsGrowth <= 4 * 2 ** 20, 'the JS heap grew by more than 4 MiB');
    },
  );

  await step('(b) a Vite app runs the package in a module Worker (vite build, Chromium)', async () => {
    const dir = project('vite-worker', tarball);
    projects.push(dir);
    mkdirSync(join(dir, 'public'));
    cpSync(otkeModel, join(dir, 'public', 'otke.safetensors'));
    cpSync(graphitModel, join(dir, 'public', 'graphit.safetensors'));
    const { build } = await import('vite');
    await build({
      root: dir,
      base: './',
      configFile: false,
      logLevel: 'warn',
      build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
      worker: { format: 'es' },
    });
    const dist = join(dir, 'dist');
    // Both modules are emitted (the threaded one is imported only where it can run); the page fetches one.
    const wasmSizes = filesUnder(dist)
      .filter((f) => f.endsWith('.wasm'))
      .map((f) => statSync(f).size)
      .sort();
    const expectedSizes = [
      wasmBytes.length,
      threadedWasmBytes.length,
      relaxedWasmBytes.length,
      relaxedThreadedWasmBytes.length,
    ].sort();
    check(
      JSON.stringify(wasmSizes) === JSON.stringify(expectedSizes),
      `vite build emitted .wasm files of ${wasmSizes} bytes, expected the package's four (${expectedSizes})`,
    );
    process.env.DEMO_DIST = dist;
    const { runDemoTest, check: pageCheck } = await import(join(repoRoot, 'web', 'demo', 'e2e', 'harness.mjs'));
    const before = process.exitCode;
    // The same page from a plain static host (one thread) and from one sending COOP/COEP (threads).
    const results = {};
    for (const isolated of [false, true]) {
      await runDemoTest({
        name: `package (b, ${isolated ? 'cross-origin isolated' : 'plain host'})`,
        shot: 'package-vite-worker.png',
        timeoutMs: 60_000,
        isolated,
        body: async ({ page, url }) => {
          await page.goto(url);
          await page.waitForSelector('body[data-done]');
          const r = JSON.parse(await page.textContent('#status'));
          pageCheck(r.ok, `the worker failed: ${r.error}`);
          // Chromium validates relaxed SIMD (since 114): the relaxed modules run.
          pageCheck(r.simd === 'wasm-relaxed-simd', `simd ${r.simd}`);
          pageCheck(r.planError < 1e-5, `2x2 plan vs the closed form: error ${r.planError}`);
          pageCheck(JSON.stringify(r.labels) === '["promoter"]', `labels ${JSON.stringify(r.labels)}`);
          pageCheck(Math.abs(r.probabilitySum - 1) < 1e-5, `probabilities sum to ${r.probabilitySum}`);
          pageCheck(r.errorCode === 'bad_model_file', `a 16-byte model gave ${r.errorCode}`);
          pageCheck(
            r.streamed === 1,
            `the wasm was compiled with instantiateStreaming ${r.streamed} times, expected 1`,
          );
          pageCheck(
            r.wasm.length === 1 && r.wasm[0].startsWith(url),
            `the wasm came from ${JSON.stringify(r.wasm)}, expected one file under ${url}`,
          );
          pageCheck(r.survivorMatches, 'a model used after ind.dispose() predicted differently (or failed)');
          pageCheck(r.isolated === isolated, `the worker is ${r.isolated ? '' : 'not '}cross-origin isolated`);
          if (isolated) {
            const cores = await page.evaluate(() => navigator.hardwareConcurrency);
            pageCheck(
              r.threads === Math.min(cores, 8) && r.threadsNote === '',
              `threads ${r.threads} (${r.threadsNote}) on ${cores} cores, expected ${Math.min(cores, 8)}`,
            );
            pageCheck(
              /inductive-mt-relaxed/.test(r.wasm[0]),
              `an isolated page loaded ${r.wasm[0]}, not inductive-mt-relaxed`,
            );
          } else {
            pageCheck(
              r.threads === 1 && /not cross-origin isolated/.test(r.threadsNote),
              `a plain host gave threads ${r.threads} (${r.threadsNote})`,
            );
            pageCheck(
              /inductive-relaxed/.test(r.wasm[0]) && !/inductive-mt/.test(r.wasm[0]),
              `a plain host loaded ${r.wasm[0]}, not inductive-relaxed`,
            );
          }
          results[isolated] = r;
          const { parallel, ...shown } = r;
          console.log(`package (b): worker result ${relative(repoRoot, dist)}: ${JSON.stringify(shown)}`);
        },
      });
    }
    if (results.true && results.false) {
      // Threads deal the same independent problems out differently: the outputs must be the same bits.
      for (const key of ['plan', 'probabilities', 'graphit']) {
        const a = results.false.parallel[key],
          b = results.true.parallel[key];
        const differing = a.findIndex((v, i) => !Object.is(v, b[i]));
        check(
          a.length === b.length && a.length > 0 && differing < 0,
          `${key}: ${results.true.threads} threads differ from 1 thread at ${differing} (${a[differing]} vs ${b[differing]})`,
        );
      }
      log(
        `(b) ${results.true.threads} threads and 1 thread gave the same bits (${results.true.parallel.plan.length} plan ` +
          `entries, ${results.true.parallel.probabilities.length} OTKE probabilities, ${results.true.parallel.graphit.length} ` +
          'GraphiT outputs)',
      );
    }
    check(process.exitCode === before, 'the Chromium run failed (see above)');
  });
} finally {
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}

if (failures.length) {
  console.error(`package: ${failures.length} failed: ${failures.join('; ')}`);
  process.exitCode = 1;
} else {
  log('all consumers passed');
}
