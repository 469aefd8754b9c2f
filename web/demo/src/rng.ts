// Seeded pseudo-random numbers, so "Random" scenes are reproducible from the seed shown in the page
// (Math.random cannot be seeded). mulberry32: 32-bit state, full period 2^32, plenty for point clouds.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    normal: () => {
      // 1 - next() is in (0, 1], so the log never sees 0.
      const r = Math.sqrt(-2 * Math.log(1 - next()));
      return r * Math.cos(2 * Math.PI * next());
    },
  };
}
