// Runs the benchmark's workloads (workloads.json) on one `init({ threads })` instance and posts the throughputs:
// the median of `repeats` timed runs after one warm-up, as bench/parity_bench.cpp measures natively.
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

function medianSeconds(repeats: number, body: () => void): number {
  body(); // warm-up: compiles, grows memory
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
    const tSinkhorn = medianSeconds(w.repeats, () => {
      ind.sinkhornBatch(cost, { batch: s.batch, nMax: s.n, pMax: s.p }, { eps: s.eps, maxIter: s.maxIter, tol: 0 });
    });
    const tOtke = medianSeconds(w.repeats, () => otke.predict(sequences));
    const tGraphit = medianSeconds(w.repeats, () => graphit.predictSmiles(smiles));
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
