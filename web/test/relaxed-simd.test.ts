// The relaxed-SIMD modules (inductive-relaxed: fused multiply-adds in the kernels, simd/madd.h) against the SIMD128
// ones, through the package's API. Node 20 validates relaxed SIMD only behind --experimental-wasm-relaxed-simd, so
// vitest.config.ts runs this file alone in a project whose workers get that flag; Chromium runs the relaxed modules
// by default (tests/package, web/demo/e2e).
//
// A fused multiply-add rounds once where a multiply and an add round twice, so the two builds agree to rounding,
// not bit for bit; each comparison below bounds the gap the way the native reference tests bound theirs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { init, relaxedSimdSupported } from '../src/index.js';
import { rng, uniform } from './support/random.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const maxGap = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  expect(a.length).toBe(b.length);
  let gap = 0;
  for (let i = 0; i < a.length; ++i) gap = Math.max(gap, Math.abs(a[i]! - b[i]!));
  return gap;
};

describe('the relaxed-SIMD modules', () => {
  it('are what init() loads where the engine validates relaxed SIMD, and simd128 still loads the others', async () => {
    expect(relaxedSimdSupported()).toBe(true);
    expect((await init()).simd).toBe('wasm-relaxed-simd');
    expect((await init({ simd: 'simd128' })).simd).toBe('wasm-simd128');
    // wasmBinary/wasmUrl name the one-thread SIMD128 module: it is what runs with them.
    const bytes = readFileSync(new URL('../wasm/inductive.wasm', import.meta.url));
    expect((await init({ wasmBinary: new Uint8Array(bytes) })).simd).toBe('wasm-simd128');
  });

  it('solve a Sinkhorn batch as the SIMD128 modules do, up to rounding', async () => {
    const [fast, plain] = [await init(), await init({ simd: 'simd128' })];
    const shape = { batch: 16, nMax: 200, pMax: 32 };
    const cost = uniform(rng(7), shape.batch * shape.nMax * shape.pMax);
    const options = { eps: 0.5, maxIter: 50, tol: 0 };
    const a = fast.sinkhornBatch(cost, shape, options);
    const b = plain.sinkhornBatch(cost, shape, options);
    expect(maxGap(a.plan, b.plan)).toBeLessThan(1e-6); // plan entries ~ 1/(n p) = 1.6e-4
    expect(maxGap(a.f, b.f)).toBeLessThan(1e-4);
    expect(maxGap(a.marginalError, b.marginalError)).toBeLessThan(1e-5);
  });

  it('predict with the shipped OTKE and GraphiT models as the SIMD128 modules do, up to rounding', async () => {
    const [fast, plain] = [await init(), await init({ simd: 'simd128' })];
    const otke = readFileSync(repo('data/models/otke-promoters-ecoli.safetensors'));
    const next = rng(11);
    const sequences = Array.from({ length: 32 }, () =>
      Array.from({ length: 150 }, () => 'ACGT'[Math.floor(next() * 4)]).join(''),
    );
    const [p, q] = [fast, plain].map((ind) => ind.loadOtkeModel(new Uint8Array(otke)).predict(sequences.slice()));
    expect(maxGap(p!.logits, q!.logits)).toBeLessThan(1e-4);

    const graphit = readFileSync(repo('data/models/graphit-mutag.safetensors'));
    const smiles = ['O=[N+]([O-])c1ccccc1', 'Nc1ccc2ccccc2c1', 'Clc1ccc2cc3ccccc3cc2c1', 'OCc1ccc2c(c1)ccc1ccccc12'];
    const [g, h] = [fast, plain].map((ind) => ind.loadGraphitModel(new Uint8Array(graphit)));
    const [pg, ph] = [g!, h!].map((m) => m.predictSmiles(smiles).probabilities);
    expect(maxGap(pg!, ph!)).toBeLessThan(1e-5);
    const [ag, ah] = [g!, h!].map((m) => m.attention('O=[N+]([O-])c1ccccc1').meanSaliency);
    expect(maxGap(ag!, ah!)).toBeLessThan(1e-5);
  });
});
