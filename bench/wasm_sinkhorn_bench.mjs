// Benchmark of the wasm build (npm package `inductive`) on the OTKE mini-batch, with a plain-JS baseline.
//
//   node bench/wasm_sinkhorn_bench.mjs [DIR] [--min-time S] [--min-repeats N]
//
// Problem (bench/README.md): 64 problems, n ~ U[200, 1000] padded to nMax 1000 and masked, p = 64, costs
// uniform in [0, 1), uniform marginals, eps 0.5, float32, 10 and 100 iterations at a fixed count. With DIR (as
// written by `sinkhorn_bench --dump DIR`, which scripts/bench.sh does) the very same batch as the native and POT
// runs is read from DIR/{cost,n,eps}.npy; without it a seeded batch of the same law is generated here.
//
// Rows: the package API (one copy in, one copy out, as a user pays), the raw wasm call alone (inputs already in
// wasm memory), and a plain-JS float64 log-domain Sinkhorn (same iteration order, one problem at a time, cut to
// its true n). The JS baseline at 100 iterations is measured on a subset of the batch and scaled by its share
// of the rows; the output says so. Timing: one warm-up, then runs until >= min-time and >= min-repeats; median
// wall time (ms_per_batch, as the other benchmarks) and median CPU time of the process (cpu_ms_per_batch).
// Output: readable lines, plus one JSON line per row (the fields of bench/bench_table.py) for scripts/bench.sh.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const distEntry = join(root, 'web/dist/index.js');
const wasmFile = join(root, 'web/wasm/inductive.wasm');
if (!existsSync(distEntry) || !existsSync(wasmFile)) {
  console.error('wasm bench: build first: cmake --build build/wasm-release && npx tsc -p web');
  process.exit(1);
}
const { init } = await import(distEntry);
const createModule = (await import(join(root, 'web/wasm/inductive.mjs'))).default;

// ---- arguments -------------------------------------------------------------------------------------------
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args.splice(i, 2)[1]) : fallback;
};
const minTime = option('--min-time', 1.0);
const minRepeats = option('--min-repeats', 3);
const dumpDir = args[0];

// ---- the batch -------------------------------------------------------------------------------------------
const BATCH = 64,
  N_MIN = 200,
  N_MAX = 1000,
  P = 64,
  EPS = 0.5;

// .npy v1-3, little-endian float32/int32, C order: all that sinkhorn_bench --dump writes.
function readNpy(path) {
  const bytes = readFileSync(path);
  const version = bytes[6];
  const headerLength = version === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = version === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shape = (/'shape':\s*\(([^)]*)\)/.exec(header)?.[1] ?? '')
    .split(',')
    .filter((s) => s.trim())
    .map(Number);
  const data = bytes.buffer.slice(bytes.byteOffset + start + headerLength, bytes.byteOffset + bytes.length);
  if (descr === '<f4') return { shape, data: new Float32Array(data) };
  if (descr === '<i4') return { shape, data: new Int32Array(data) };
  throw new Error(`${path}: unsupported dtype ${descr}`);
}

function seededBatch(seed) {
  let s = seed >>> 0; // mulberry32
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = Int32Array.from({ length: BATCH }, () => N_MIN + Math.floor(next() * (N_MAX - N_MIN + 1)));
  const cost = new Float32Array(BATCH * N_MAX * P); // padding stays 0 (never read)
  for (let b = 0; b < BATCH; ++b) {
    for (let k = 0; k < (n[b] ?? 0) * P; ++k) cost[b * N_MAX * P + k] = next();
  }
  return { cost, n, eps: EPS, source: 'generated here (seed 42)' };
}

function loadBatch() {
  if (!dumpDir) return seededBatch(42);
  const cost = readNpy(join(dumpDir, 'cost.npy'));
  const [batch, nMax, p] = cost.shape;
  if (batch !== BATCH || nMax !== N_MAX || p !== P) throw new Error(`unexpected batch shape ${cost.shape}`);
  return {
    cost: cost.data,
    n: readNpy(join(dumpDir, 'n.npy')).data,
    eps: readNpy(join(dumpDir, 'eps.npy')).data[0],
    source: `read from ${dumpDir} (the batch of the native and POT runs)`,
  };
}

// ---- plain-JS baseline: log-domain Sinkhorn in float64, the core's order (columns, then rows) -------------
function jsSinkhorn(cost, offset, n, p, eps, iters) {
  const K = new Float64Array(n * p);
  for (let k = 0; k < n * p; ++k) K[k] = -cost[offset + k] / eps;
  const F = new Float64Array(n),
    G = new Float64Array(p),
    m = new Float64Array(p),
    acc = new Float64Array(p);
  const la = -Math.log(n),
    lb = -Math.log(p);
  for (let t = 0; t < iters; ++t) {
    m.fill(-Infinity);
    acc.fill(0);
    for (let i = 0; i < n; ++i) {
      for (let j = 0, r = i * p; j < p; ++j) {
        const v = F[i] + K[r + j];
        if (v > m[j]) m[j] = v;
      }
    }
    for (let i = 0; i < n; ++i) {
      for (let j = 0, r = i * p; j < p; ++j) acc[j] += Math.exp(F[i] + K[r + j] - m[j]);
    }
    for (let j = 0; j < p; ++j) G[j] = lb - (m[j] + Math.log(acc[j]));
    for (let i = 0; i < n; ++i) {
      let mx = -Infinity,
        sum = 0;
      for (let j = 0, r = i * p; j < p; ++j) {
        const v = G[j] + K[r + j];
        if (v > mx) mx = v;
      }
      for (let j = 0, r = i * p; j < p; ++j) sum += Math.exp(G[j] + K[r + j] - mx);
      F[i] = la - (mx + Math.log(sum));
    }
  }
  const plan = new Float64Array(n * p);
  for (let i = 0; i < n; ++i) for (let j = 0; j < p; ++j) plan[i * p + j] = Math.exp(F[i] + G[j] + K[i * p + j]);
  return plan;
}

// ---- timing ----------------------------------------------------------------------------------------------
// Wall time is what a user waits; CPU time of this (single-threaded) process is what the work costs, and it
// stays meaningful on a shared machine where other jobs take turns on the cores. Both are medians.
function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function measure(run) {
  run(); // warm-up
  const wall = [],
    cpu = [];
  while (wall.length < minRepeats || wall.reduce((s, t) => s + t, 0) < minTime * 1e3) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    run();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e3);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const rows = [];
function report(impl, dtype, simd, iters, t, note = '') {
  rows.push({
    impl,
    dtype,
    simd,
    threads: 1,
    iters,
    batch: BATCH,
    ms_per_batch: Number(t.wall.toFixed(3)),
    problems_per_s: Number((BATCH / (t.wall * 1e-3)).toFixed(1)),
    cpu_ms_per_batch: Number(t.cpu.toFixed(3)),
  });
  console.log(
    `${impl.padEnd(30)} ${String(iters).padStart(4)} iters  ${t.wall.toFixed(1).padStart(9)} ms/batch  ` +
      `${(BATCH / (t.wall * 1e-3)).toFixed(1).padStart(8)} problems/s  cpu ${t.cpu.toFixed(1).padStart(9)} ms/batch` +
      `${note ? `  (${note})` : ''}`,
  );
  return t;
}

// ---- run -------------------------------------------------------------------------------------------------
const { cost, n, eps, source } = loadBatch();
const ind = await init();
const raw = await createModule({ wasmBinary: readFileSync(wasmFile) });
const commit = (() => {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'none';
  }
})();
console.log(`wasm Sinkhorn bench: batch ${BATCH}, n ~ U[${N_MIN}, ${N_MAX}] (padded to ${N_MAX}), p ${P}, eps ${eps}`);
console.log(`batch: ${source}; total rows ${n.reduce((s, x) => s + x, 0)}`);
console.log(
  `device: ${os.cpus()[0]?.model ?? os.arch()}, node ${process.version}, simd ${ind.simd}, ` +
    `commit ${commit}, ${new Date().toISOString()}; wasm is single-threaded`,
);

const shape = { batch: BATCH, nMax: N_MAX, pMax: P, n };
const totalRows = n.reduce((s, x) => s + x, 0);

// The raw call: inputs copied into wasm memory once, outside the timing; plan only, as the native bench.
const size = BATCH * N_MAX * P;
const base = raw._malloc(size * 8 + BATCH * 4);
raw.HEAPF32.set(cost, base >>> 2);
raw.HEAP32.set(n, (base + size * 8) >>> 2);
const rawCall = (iters) => ({
  cost: base,
  n: base + size * 8,
  p: 0,
  a: 0,
  b: 0,
  batch: BATCH,
  nMax: N_MAX,
  pMax: P,
  eps,
  maxIter: iters,
  tol: 0,
  similarity: false,
  plan: base + size * 4,
  f: 0,
  g: 0,
  nIter: 0,
  marginalError: 0,
  converged: 0,
  costValue: 0,
});

for (const iters of [10, 100]) {
  console.log('');
  const api = report(
    'inductive wasm (API)',
    'float32',
    ind.simd,
    iters,
    measure(() => ind.sinkhornBatch(cost, shape, { eps, maxIter: iters })),
    'copies in and out included',
  );
  report(
    'inductive wasm (solve only)',
    'float32',
    ind.simd,
    iters,
    measure(() => {
      if (!raw.sinkhornBatch(rawCall(iters))) throw new Error(raw.lastErrorMessage());
    }),
  );

  // JS baseline: the whole batch if one pass is short, else the first problems holding ~1/8 of the rows.
  const probe = performance.now();
  jsSinkhorn(cost, 0, n[0], P, eps, iters);
  const estimate = ((performance.now() - probe) * totalRows) / n[0];
  let count = BATCH;
  if (estimate > 1500) {
    let rowsSoFar = 0;
    for (count = 0; count < BATCH && rowsSoFar < totalRows / 8; ++count) rowsSoFar += n[count];
  }
  const subsetRows = n.subarray(0, count).reduce((s, x) => s + x, 0);
  const subset = measure(() => {
    for (let b = 0; b < count; ++b) jsSinkhorn(cost, b * N_MAX * P, n[b], P, eps, iters);
  });
  const js = report(
    'plain JS (float64, log-domain)',
    'float64',
    'none',
    iters,
    { wall: (subset.wall * totalRows) / subsetRows, cpu: (subset.cpu * totalRows) / subsetRows },
    count === BATCH ? 'whole batch' : `measured on ${count} of ${BATCH} problems, scaled by rows`,
  );
  console.log(
    `wasm API speed-up over plain JS: ${(js.wall / api.wall).toFixed(1)}x wall, ` +
      `${(js.cpu / api.cpu).toFixed(1)}x cpu`,
  );

  // Both solve the same problem: the first plan agrees to float32 accuracy.
  const r = ind.sinkhornBatch(cost, shape, { eps, maxIter: iters });
  const ref = jsSinkhorn(cost, 0, n[0], P, eps, iters);
  let diff = 0,
    scale = 0;
  for (let k = 0; k < n[0] * P; ++k) {
    diff = Math.max(diff, Math.abs(r.plan[k] - ref[k]));
    scale = Math.max(scale, Math.abs(ref[k]));
  }
  console.log(`check: problem 0 plan, wasm vs JS max relative difference ${(diff / scale).toExponential(2)}`);
}
raw._free(base);

console.log('');
for (const row of rows) console.log(JSON.stringify(row));
