// The package's relaxed-SIMD modules against its SIMD128 ones on the browser benchmark's GraphiT and OTKE workloads
// (web/demo/src/bench/workloads.json): two instances in one process, init() and init({ simd: 'simd128' }), timed
// alternately for --rounds rounds (the median of 5 runs after a warm-up each), medians printed. In Node (20: run
// again with --experimental-wasm-relaxed-simd when this Node needs it) or, with --chromium, in a page of Debian's
// Chromium served cross-origin isolated. Needs the built package (npm run build: web/dist, web/wasm).
//
//   node bench/wasm_relaxed_ab.mjs [--chromium] [--rounds 12]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const FLAG = '--experimental-wasm-relaxed-simd';

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(2);
}

if (args.includes('--help')) {
  console.log('wasm_relaxed_ab: the relaxed-SIMD modules against the SIMD128 ones (GraphiT and OTKE, ms per batch)\n');
  console.log('Usage: node bench/wasm_relaxed_ab.mjs [--chromium] [--rounds N]\n');
  console.log('  --chromium   in a Debian Chromium page (default: this Node)');
  console.log('  --rounds N   alternations of the two builds (default 12)');
  process.exit(0);
}
let rounds = 12;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--chromium') continue;
  if (args[i] === '--rounds' && /^[1-9]\d*$/.test(args[i + 1] ?? '')) rounds = Number(args[++i]);
  else fail(`unknown or incomplete argument ${args[i]} (see --help)`);
}
if (!existsSync(join(repo, 'web/dist/index.js')) || !existsSync(join(repo, 'web/wasm/inductive-relaxed.wasm')))
  fail('web/dist or web/wasm is missing: run npm run build first');

// The measurement, run as written in Node and (serialised) in the page. readBytes/readText fetch a repo file.
async function measure(init, readBytes, readText, rounds) {
  const w = JSON.parse(await readText('web/demo/src/bench/workloads.json'));
  const smiles = [];
  for (let c = 0; c < w.graphit.copies; ++c)
    for (const ring of w.graphit.rings) for (const group of w.graphit.groups) smiles.push(group + ring);
  let x = w.otke.seed; // xorshift32, as web/demo/src/bench/inputs.ts
  const base = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return 'ACGT'[(x >>> 30) & 3];
  };
  const sequences = Array.from({ length: w.otke.sequences }, () =>
    Array.from({ length: w.otke.length }, base).join(''),
  );
  const graphitBytes = await readBytes(`data/models/${w.graphit.model}`);
  const otkeBytes = await readBytes(`data/models/${w.otke.model}`);
  const builds = {};
  for (const [name, options] of [
    ['relaxed', {}],
    ['simd128', { simd: 'simd128' }],
  ]) {
    const ind = await init({ ...options, threads: 1 });
    builds[name] = { ind, graphit: ind.loadGraphitModel(graphitBytes), otke: ind.loadOtkeModel(otkeBytes) };
  }
  const ms = (f) => {
    f();
    const t = [];
    for (let r = 0; r < 5; ++r) {
      const t0 = performance.now();
      f();
      t.push(performance.now() - t0);
    }
    return t.sort((a, b) => a - b)[2];
  };
  const times = { relaxed: { graphit: [], otke: [] }, simd128: { graphit: [], otke: [] } };
  for (let r = 0; r < rounds; ++r)
    for (const name of ['relaxed', 'simd128']) {
      const b = builds[name];
      times[name].graphit.push(ms(() => b.graphit.predictSmiles(smiles)));
      times[name].otke.push(ms(() => b.otke.predict(sequences)));
    }
  const median = (a) => [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)];
  const rows = ['graphit', 'otke'].map((k) => ({
    workload: k === 'graphit' ? `GraphiT, ${smiles.length} molecules` : `OTKE, ${sequences.length} sequences`,
    relaxed: median(times.relaxed[k]),
    simd128: median(times.simd128[k]),
  }));
  return { kernels: [builds.relaxed.ind.simd, builds.simd128.ind.simd], rows };
}

function print(where, result) {
  if (result.kernels[0] !== 'wasm-relaxed-simd') fail(`${where} ran ${result.kernels[0]}, not the relaxed modules`);
  console.log(`${where}, 1 thread, ms per batch (medians of ${rounds} alternations)\n`);
  console.log('| workload | wasm-relaxed-simd | wasm-simd128 | speed-up |\n|---|---|---|---|');
  for (const r of result.rows)
    console.log(
      `| ${r.workload} | ${r.relaxed.toFixed(1)} | ${r.simd128.toFixed(1)} | ${(r.simd128 / r.relaxed).toFixed(2)}x |`,
    );
}

const { init, relaxedSimdSupported } = await import(join(repo, 'web/dist/index.js'));
if (!args.includes('--chromium')) {
  if (!relaxedSimdSupported()) {
    if (process.execArgv.includes(FLAG)) fail(`Node ${process.version} cannot run relaxed SIMD`);
    const again = spawnSync(process.execPath, [FLAG, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(again.status ?? 2);
  }
  const file = (path) => readFileSync(join(repo, path));
  print(
    `Node ${process.version}`,
    await measure(
      init,
      (p) => new Uint8Array(file(p)),
      (p) => file(p).toString(),
      rounds,
    ),
  );
} else {
  const { chromium } = await import('playwright-core');
  const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  const page = `<!doctype html><script type="module">
    import { init } from '/web/dist/index.js';
    const get = async (p) => { const r = await fetch('/' + p); if (!r.ok) throw new Error(p + ': ' + r.status); return r; };
    const measure = ${measure.toString()};
    measure(init, async (p) => new Uint8Array(await (await get(p)).arrayBuffer()), async (p) => (await get(p)).text(), ${rounds})
      .then((r) => { window.result = r; }, (e) => { window.result = { error: String(e) }; });
  </script>`;
  const server = http.createServer((req, res) => {
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
    const path = decodeURIComponent(req.url.split('?')[0]);
    if (path === '/') return res.writeHead(200, { ...headers, 'Content-Type': 'text/html' }).end(page);
    const file = resolve(repo, `.${path}`);
    if (!file.startsWith(repo) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { ...headers, 'Content-Type': types[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => window.result !== undefined, null, { timeout: 600_000 });
    const result = await tab.evaluate(() => window.result);
    if (result.error) fail(`the page failed: ${result.error}`);
    print(`Chromium ${browser.version()}`, result);
  } finally {
    await browser.close();
    server.close();
  }
}
