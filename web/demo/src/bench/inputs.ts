// The benchmark's inputs, generated exactly as bench/parity_bench.cpp generates them (xorshift32 from the seeds in
// workloads.json), so the browser and the native build time the very same work.
import workloads from './workloads.json';

export type Workloads = typeof workloads;
export { workloads };

function xorshift32(seed: number): { next(): number; uniform(): number } {
  let x = seed >>> 0;
  const next = (): number => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  // Floats in [0, 1) from the top 24 bits: exactly representable as float32, as in C++.
  return { next, uniform: () => (next() >>> 8) / 16777216 };
}

export function sinkhornCosts(w: Workloads['sinkhorn']): Float32Array {
  const r = xorshift32(w.seed);
  const cost = new Float32Array(w.batch * w.n * w.p);
  for (let i = 0; i < cost.length; i++) cost[i] = r.uniform();
  return cost;
}

export function dnaSequences(w: Workloads['otke']): string[] {
  const r = xorshift32(w.seed);
  return Array.from({ length: w.sequences }, () => {
    let s = '';
    for (let k = 0; k < w.length; k++) s += 'ACGT'[r.next() >>> 30];
    return s;
  });
}

export function molecules(w: Workloads['graphit']): string[] {
  const out: string[] = [];
  for (let c = 0; c < w.copies; c++) for (const ring of w.rings) for (const group of w.groups) out.push(group + ring);
  return out;
}
