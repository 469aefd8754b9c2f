// Loading, memory growth and disposal.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { init, InductiveError, relaxedSimdSupported } from '../src/index.js';
import { referenceSinkhorn } from './support/reference-sinkhorn.js';
import { marginal, rng, squaredDistances } from './support/random.js';
import { expectInductiveError, relativeError } from './support/expect.js';

const wasmPath = new URL('../wasm/inductive.wasm', import.meta.url);
const versionOf = (path: string): string => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')).version;

describe('init', () => {
  it('reports the one version of the project (root package.json), the build and the SIMD kernels', async () => {
    const ind = await init();
    expect(ind.version).toBe(versionOf('../../package.json'));
    expect(versionOf('../package.json')).toBe(ind.version);
    // The relaxed modules where this Node validates relaxed SIMD (Node 20: only with a V8 flag, test/relaxed-simd).
    expect(ind.simd).toBe(relaxedSimdSupported() ? 'wasm-relaxed-simd' : 'wasm-simd128');
    expect(ind.producer).toBe(`inductive ${ind.version} wasm`);
    expect((await init({ simd: 'simd128' })).simd).toBe('wasm-simd128');
  });

  it('takes simd: auto or simd128; anything else is an invalid_argument', async () => {
    expect((await init({ simd: 'auto' })).simd).toMatch(/^wasm-(relaxed-)?simd(128)?$/);
    for (const simd of ['relaxed', 'SIMD128', '', 1, null]) {
      await expect(init({ simd: simd as never })).rejects.toMatchObject({
        code: 'invalid_argument',
        message: expect.stringMatching(/simd must be 'auto' or 'simd128'/),
      });
    }
  });

  it('runs one thread in Node and says why; a bad threads option is an invalid_argument', async () => {
    for (const threads of [undefined, 'auto', 1, 4] as const) {
      const ind = await init(threads === undefined ? {} : { threads });
      expect(ind.threads).toBe(1);
      expect(ind.threadsNote).toMatch(threads === 1 ? /one thread was asked/ : /Node runs the one-thread module/);
      expect(ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2).plan.length).toBe(4);
    }
    for (const threads of [0, -1, 1.5, 65, 'many', null, Number.NaN]) {
      await expect(init({ threads: threads as never })).rejects.toMatchObject({
        code: 'invalid_argument',
        message: expect.stringMatching(/threads must be 'auto' or an integer in \[1, 64\]/),
      });
    }
  });

  it('takes the wasm bytes (wasmBinary) or a file to read them from (wasmUrl)', async () => {
    const bytes = readFileSync(wasmPath);
    for (const options of [
      { wasmBinary: new Uint8Array(bytes) },
      { wasmBinary: bytes.buffer.slice(0) },
      { wasmUrl: wasmPath },
      { wasmUrl: wasmPath.pathname },
    ]) {
      const ind = await init(options as never);
      expect(ind.sinkhorn(new Float32Array([0]), 1, 1).plan[0]).toBe(1);
    }
  });

  it('fails with io for a missing file, backend for bytes that are not inductive.wasm', async () => {
    await expect(init({ wasmUrl: '/nonexistent/inductive.wasm' })).rejects.toMatchObject({
      name: 'InductiveError',
      code: 'io',
      message: expect.stringContaining('/nonexistent/inductive.wasm'),
    });
    await expect(init({ wasmBinary: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) })).rejects.toMatchObject({
      name: 'InductiveError',
      code: 'backend',
    });
    await expect(init({ wasmBinary: 'bytes' as never })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('wasm memory growth', () => {
  it('solves a large problem after a small one, and both results stay right and readable', async () => {
    const ind = await init();
    const next = rng(21);
    const small = ind.sinkhorn(squaredDistances(next, 5, 4), 5, 4);
    const smallPlan = Array.from(small.plan);

    // 2048 x 2048: cost and plan need 32 MiB, twice the initial 16 MiB of wasm memory, so memory must grow.
    const n = 2048,
      p = 2048;
    const a = marginal(next, n),
      b = marginal(next, p);
    const constant = ind.sinkhorn(new Float32Array(n * p).fill(1), n, p, { a, b, maxIter: 2 });
    const k = 1234 * p + 567;
    expect(constant.plan[k]).toBeCloseTo((a[1234] ?? 0) * (b[567] ?? 0), 12);
    expect(constant.converged).toBe(true);

    // The small result owns its buffer: growth did not detach or change it.
    expect(small.plan.buffer.byteLength).toBe(small.plan.byteLength);
    expect(Array.from(small.plan)).toEqual(smallPlan);

    // A random problem after growth still matches the reference.
    const cost = squaredDistances(next, 300, 200);
    const r = ind.sinkhorn(cost, 300, 200, { maxIter: 5 });
    expect(
      relativeError(r.plan, referenceSinkhorn({ cost, n: 300, p: 200, eps: 0.5, iterations: 5 }).plan),
    ).toBeLessThan(1e-5);
  });
});

describe('dispose', () => {
  it('makes every later call throw InductiveError(backend), and can be called twice', async () => {
    const ind = await init();
    ind.dispose();
    ind.dispose();
    expectInductiveError(() => ind.sinkhorn(new Float32Array([0]), 1, 1), 'backend', 'disposed');
    expectInductiveError(() => ind.sinkhornBatch(new Float32Array([0]), { batch: 1, nMax: 1, pMax: 1 }), 'backend');
    expectInductiveError(() => ind.readModelInfo(new Uint8Array(8)), 'backend');
    expect(ind.version).toMatch(/^\d/); // plain data stays readable
  });

  it('does not affect other instances', async () => {
    const first = await init();
    const second = await init();
    first.dispose();
    expect(second.sinkhorn(new Float32Array([3]), 1, 1).plan[0]).toBe(1);
  });

  it('is what Symbol.dispose calls (for `using`)', async () => {
    const ind = await init();
    (ind as unknown as Disposable)[Symbol.dispose]();
    expect(() => ind.sinkhorn(new Float32Array([0]), 1, 1)).toThrow(InductiveError);
  });
});

// OtkeModel, GraphitModel and ScreeningDataset share one lifecycle (src/wasm-object.ts).
describe('objects that own wasm memory', () => {
  const repo = (p: string) => new URL(`../../${p}`, import.meta.url);
  const dna = Array.from({ length: 40 }, (_, i) => 'ACGTTGCAAC'.repeat(4).slice(i % 7) + 'ACGTACGTAC');
  const smiles = Array.from({ length: 40 }, (_, i) => 'C'.repeat(1 + (i % 5)) + 'O');

  it('finish the call a progress callback disposes them from, then refuse every call', async () => {
    const ind = await init();
    const otke = ind.loadOtkeModel(new Uint8Array(readFileSync(repo('data/models/otke-promoters-ecoli.safetensors'))));
    let calls = 0;
    const e = otke.embedSequences(dna, { batchSize: 8, onProgress: () => void (++calls === 1 && otke.dispose()) });
    expect(calls).toBeGreaterThanOrEqual(5); // every one of the 5 batches ran on memory that was still there
    expect(e.embeddings.every(Number.isFinite)).toBe(true);
    expect(otke.disposed).toBe(true);
    expectInductiveError(() => otke.embedSequences(dna), 'backend', 'this OtkeModel was disposed');

    const graphit = ind.loadGraphitModel(new Uint8Array(readFileSync(repo('data/models/graphit-mutag.safetensors'))));
    calls = 0;
    const p = graphit.predictSmiles(smiles, {
      batchSize: 8,
      onProgress: () => void (++calls === 1 && graphit.dispose()),
    });
    expect(p.probabilities.every(Number.isFinite)).toBe(true);
    expect(graphit.disposed).toBe(true);
    expectInductiveError(() => graphit.predictSmiles('CCO'), 'backend', 'this GraphitModel was disposed');
    ind.dispose();
  });

  it('are disposed by Symbol.dispose, idempotently', async () => {
    const ind = await init();
    const data = ind.datasetFromArrays(new Float32Array([1, 0, 0, 1, 1, 1]), 3, 2, new Float32Array([1, -1, 1]));
    const otke = ind.loadOtkeModel(new Uint8Array(readFileSync(repo('data/models/otke-promoters-ecoli.safetensors'))));
    for (const o of [data, otke]) {
      (o as unknown as Disposable)[Symbol.dispose]();
      expect(o.disposed).toBe(true);
      o.dispose();
    }
    expectInductiveError(() => data.screen({ lambda: 0.1 }), 'backend', 'this ScreeningDataset was disposed');
    ind.dispose();
  });
});
