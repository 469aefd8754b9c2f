// Runs the benchmark's workloads (workloads.json) on one `init({ threads })` instance and posts the throughputs:
// the median of `repeats` timed runs after every workload has warmed up (bench/parity_bench.cpp times the same
// natively, after one warm-up run: no compiler runs there).
import { init } from 'inductive';
import { dnaSequences, molecules, sinkhornCosts, workloads } from './inputs';
import { modelUrl as otkeModelUrl } from '../otke/model_asset';
import { modelUrl as graphitModelUrl } from '../graphit/model_asset';

export interface BenchRow {
  threads: number;
  threadsNote: string;
  /** The kernel set that ran (Inductive.simd): 'wasm-relaxed-simd' or 'wasm-simd128'. */
  simd: string;
  sinkhorn_problems_per_s: number;
  otke_sequences_per_s: number;
  graphit_molecules_per_s: number;
  wasm_memory_bytes: number;
}

// Runs a workload until it has run twice and for at least 0.4 s: V8 compiles a module's hot functions with its
// optimising tier in background threads while they run, and each row is a fresh Worker and module. Timed while that
// compile was still going on, the 2-thread row shared this machine's 2 cores with it: GraphiT's 2 threads measured
// 0.6-1.5x of 1 where Chromium with --js-flags=--no-liftoff (no background tier-up) gave 1.3-1.8x.
function warmUp(body: () => void): void {
  const t0 = performance.now();
  for (let runs = 0; runs < 2 || performance.now() - t0 < 400; runs++) body();
}

function medianSeconds(repeats: number, body: () => void): number {
  const times: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    body();
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

async function bytes(url: string): Promise<Uint8Array> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

self.onmessage = async ({ data }: MessageEvent<{ threads: number; simd: 'auto' | 'simd128' }>) => {
  try {
    const ind = await init({ threads: data.threads, simd: data.simd });
    const w = workloads;
    const cost = sinkhornCosts(w.sinkhorn);
    const sequences = dnaSequences(w.otke);
    const smiles = molecules(w.graphit);
    const otke = ind.loadOtkeModel(await bytes(otkeModelUrl));
    const graphit = ind.loadGraphitModel(await bytes(graphitModelUrl));
    const s = w.sinkhorn;
    const runSinkhorn = () => {
      ind.sinkhornBatch(cost, { batch: s.batch, nMax: s.n, pMax: s.p }, { eps: s.eps, maxIter: s.maxIter, tol: 0 });
    };
    const runOtke = () => otke.predict(sequences);
    const runGraphit = () => graphit.predictSmiles(smiles);
    // Every workload warms up before any is timed (compiles, grows memory), so that no timing overlaps a compile.
    for (const body of [runSinkhorn, runOtke, runGraphit]) warmUp(body);
    const tSinkhorn = medianSeconds(w.repeats, runSinkhorn);
    const tOtke = medianSeconds(w.repeats, runOtke);
    const tGraphit = medianSeconds(w.repeats, runGraphit);
    const row: BenchRow = {
      threads: ind.threads,
      threadsNote: ind.threadsNote,
      simd: ind.simd,
      sinkhorn_problems_per_s: s.batch / tSinkhorn,
      otke_sequences_per_s: sequences.length / tOtke,
      graphit_molecules_per_s: smiles.length / tGraphit,
      wasm_memory_bytes: ind.memoryBytes,
    };
    otke.dispose();
    graphit.dispose();
    ind.dispose();
    self.postMessage({ ok: true, row });
  } catch (e) {
    self.postMessage({ ok: false, error: String((e as Error)?.stack ?? e) });
  }
};
