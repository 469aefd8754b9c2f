// A small seeded generator (mulberry32) so every random test is reproducible from its seed.
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(next: () => number, lo: number, hi: number): number {
  return lo + Math.floor(next() * (hi - lo + 1));
}

export function uniform(next: () => number, length: number, lo = 0, hi = 1): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; ++i) out[i] = lo + (hi - lo) * next();
  return out;
}

/** Positive weights in [0.1, 1) scaled to total `mass` (float32, summed in float64). */
export function marginal(next: () => number, length: number, mass = 1): Float32Array {
  const w = Array.from({ length }, () => 0.1 + 0.9 * next());
  const total = w.reduce((s, x) => s + x, 0);
  return Float32Array.from(w, (x) => (x * mass) / total);
}

/** Squared distances between random points in the unit cube: a realistic cost matrix, n x p row-major. */
export function squaredDistances(next: () => number, n: number, p: number, dim = 3): Float32Array {
  const x = Array.from({ length: n * dim }, next);
  const y = Array.from({ length: p * dim }, next);
  const c = new Float32Array(n * p);
  for (let i = 0; i < n; ++i) {
    for (let j = 0; j < p; ++j) {
      let d = 0;
      for (let k = 0; k < dim; ++k) d += ((x[i * dim + k] ?? 0) - (y[j * dim + k] ?? 0)) ** 2;
      c[i * p + j] = d;
    }
  }
  return c;
}
