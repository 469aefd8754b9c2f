// OTKE in wasm against the native build and against the maths: embeddings of the default model equal the native
// CLI's (committed reference file), predictions equal the file's head applied to them, transport plans have the
// marginals of the thesis (rows 1/n, columns 1/p before the positional weighting, which is exactly S_ij after),
// and batching or padding never changes a sample's output.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type OtkeModel } from '../src/index.js';
import {
  classNames,
  dnaKmers,
  editModel,
  labelledPromoters,
  modelBytes,
  readNpy,
  readSafetensors,
  REFERENCE_PATH,
  referenceSequences,
} from './support/otke.js';

const ind = await init();
// Native (x86 AVX) and wasm (SIMD128) sum in different orders; the brief's bound for the embeddings.
const NATIVE_TOL = 1e-4;

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; ++i) d = Math.max(d, Math.abs((a[i] ?? NaN) - (b[i] ?? NaN)));
  return d;
}

describe('the default OTKE model', () => {
  let model: OtkeModel;
  beforeAll(() => {
    model = ind.loadOtkeModel(modelBytes());
  });
  afterAll(() => model.dispose());

  it('describes itself: a DNA k-mer model with otk pooling and a two-class head', () => {
    const { config } = model;
    expect(config.input.type).toBe('sequence');
    expect(config.input.type === 'sequence' && config.input.alphabet).toBe('dna');
    expect(config.pooling.type).toBe('otk');
    expect(model.classes).toBe(2);
    expect(() => classNames(model.labels)).not.toThrow(); // one promoter class, one "non" class
    expect(model.labels).toEqual(config.head.labels);
    const k = config.input.type === 'sequence' ? config.input.k : 0;
    expect(model.featureDim).toBe(4 * k);
    if (config.pooling.type === 'otk')
      expect(model.outputDim).toBe(config.pooling.q * config.pooling.p * model.embedDim);
    expect(model.formatVersion).toBe(1);
    expect(model.producer).toMatch(/^inductive \d+\.\d+\.\d+ /);
    expect(model.headFit).toBeNull();
  });

  it(`embeds the reference sequences as the native build does (max abs diff <= ${NATIVE_TOL})`, () => {
    expect(existsSync(REFERENCE_PATH), `${REFERENCE_PATH} is missing (data/models/README.md)`).toBe(true);
    const ref = readNpy(new Uint8Array(readFileSync(REFERENCE_PATH)));
    expect(ref.data).toBeInstanceOf(Float32Array);
    expect(ref.shape).toEqual([8, model.outputDim]);
    const { batch, dim, embeddings } = model.embedSequences(referenceSequences());
    expect([batch, dim]).toEqual([8, model.outputDim]);
    const diff = maxAbsDiff(embeddings, ref.data);
    expect(diff).toBeLessThanOrEqual(NATIVE_TOL);
    // Not trivially small: the embeddings differ between sequences by far more than the tolerance.
    expect(maxAbsDiff(embeddings.subarray(0, dim), embeddings.subarray(dim, 2 * dim))).toBeGreaterThan(10 * NATIVE_TOL);
  });

  it("predicts what the file's head gives on the native embeddings", () => {
    const ref = readNpy(new Uint8Array(readFileSync(REFERENCE_PATH))).data;
    const file = readSafetensors(modelBytes());
    const W = file.tensors.get('head.weight')!.data;
    const bias = file.tensors.get('head.bias')!.data;
    const D = model.outputDim;
    const pred = model.predict(referenceSequences());
    expect(pred.batch).toBe(8);
    expect(pred.classes).toBe(2);
    for (let b = 0; b < 8; ++b) {
      const z = [0, 1].map((c) => {
        let s = bias[c] ?? 0;
        for (let j = 0; j < D; ++j) s += (W[c * D + j] ?? 0) * (ref[b * D + j] ?? 0);
        return s;
      });
      const m = Math.max(...z);
      const e = z.map((v) => Math.exp(v - m));
      const probs = e.map((v) => v / (e[0]! + e[1]!));
      for (let c = 0; c < 2; ++c) {
        expect(pred.logits[b * 2 + c]).toBeCloseTo(z[c]!, 2);
        expect(pred.probabilities[b * 2 + c]).toBeCloseTo(probs[c]!, 3);
      }
      expect(pred.classIndex[b]).toBe(probs[1]! > probs[0]! ? 1 : 0);
      expect(pred.labels[b]).toBe(model.labels[pred.classIndex[b]!]);
      expect(pred.probabilities[b * 2]! + pred.probabilities[b * 2 + 1]!).toBeCloseTo(1, 6);
    }
  });

  it('classifies the vendored promoters well above chance', () => {
    const data = labelledPromoters(model.labels);
    const pred = model.predict(data.sequences);
    const right = pred.labels.filter((l, i) => l === data.labels[i]).length;
    expect(right / data.sequences.length).toBeGreaterThan(0.7);
  });

  it('gives every sample the same output in any batch, chunking or padding', () => {
    const seqs = referenceSequences();
    // Sequences of different lengths in one batch: the short ones are padded, which must not change them.
    const mixed = [seqs[0]!.slice(0, 30), seqs[1]!, seqs[2]!.slice(5, 60), seqs[3]!];
    const together = model.embedSequences(mixed);
    const chunked = model.embedSequences(mixed, { batchSize: 3 });
    expect(maxAbsDiff(chunked.embeddings, together.embeddings)).toBeLessThanOrEqual(1e-6);
    const D = model.outputDim;
    mixed.forEach((s, b) => {
      const alone = model.embedSequences([s]).embeddings;
      expect(maxAbsDiff(alone, together.embeddings.subarray(b * D, (b + 1) * D))).toBeLessThanOrEqual(1e-6);
    });
    // Lower case reads as upper case (the alphabet is case-insensitive).
    expect(
      maxAbsDiff(model.embedSequences([mixed[1]!.toLowerCase()]).embeddings, together.embeddings.subarray(D, 2 * D)),
    ).toBe(0);
  });

  it('embeds the sets of its k-mer features as it embeds the sequences', () => {
    const seqs = [referenceSequences()[0]!.slice(0, 40), referenceSequences()[5]!];
    const k = model.config.input.type === 'sequence' ? model.config.input.k : 0;
    const feats = seqs.map((s) => dnaKmers(s, k));
    const dim = model.featureDim;
    const lengths = Int32Array.from(feats, (f) => f.length / dim);
    const nMax = Math.max(...lengths);
    const x = new Float32Array(2 * nMax * dim).fill(1e30); // padding is never read
    feats.forEach((f, b) => x.set(f, b * nMax * dim));
    const sets = model.embedSets(x, { batch: 2, nMax, dim }, lengths);
    expect(maxAbsDiff(sets.embeddings, model.embedSequences(seqs).embeddings)).toBeLessThanOrEqual(1e-6);
    const viaSets = model.predictSets(x, { batch: 2, nMax, dim }, lengths);
    expect(maxAbsDiff(viaSets.probabilities, model.predict(seqs).probabilities)).toBeLessThanOrEqual(1e-6);
  });

  it('predicts from embeddings as from sequences', () => {
    const seqs = referenceSequences();
    const { embeddings } = model.embedSequences(seqs);
    expect(model.predictEmbeddings(embeddings)).toEqual(model.predict(seqs));
  });
});

// The committed model's positional bandwidth, known before the tests are collected.
const committedSigma = Number((readSafetensors(modelBytes()).config.pooling as { sigma_pos?: number }).sigma_pos ?? 0);

describe('transport plans', () => {
  const seqs = referenceSequences()
    .slice(0, 3)
    .map((s, i) => s.slice(0, s.length - 7 * i)); // 3 lengths
  let weighted: OtkeModel; // as committed (positional weighting or not)
  let plain: OtkeModel; // the same model without positional weighting
  const sigma = committedSigma;
  beforeAll(() => {
    weighted = ind.loadOtkeModel(modelBytes());
    plain = ind.loadOtkeModel(
      editModel(modelBytes(), (c) => {
        c.pooling.sigma_pos = 0;
      }),
    );
  });
  afterAll(() => {
    weighted.dispose();
    plain.dispose();
  });

  it('come per reference as [batch, nMax, p] with the true lengths, and with the embeddings', () => {
    const t = weighted.transportPlans(seqs);
    const k = weighted.config.input.type === 'sequence' ? weighted.config.input.k : 0;
    expect(t.batch).toBe(3);
    expect(t.k).toBe(k);
    expect(Array.from(t.sequenceLengths)).toEqual(seqs.map((s) => s.length));
    expect(Array.from(t.lengths)).toEqual(seqs.map((s) => s.length - k + 1));
    expect(t.nMax).toBe(Math.max(...t.lengths));
    expect(t.plans).toHaveLength(t.q);
    for (const plan of t.plans) expect(plan.length).toBe(3 * t.nMax * t.p);
    expect(t.positionWeighted).toBe(sigma > 0);
    expect(maxAbsDiff(t.embeddings, weighted.embedSequences(seqs).embeddings)).toBe(0);
  });

  it('have rows summing to 1/n and columns to 1/p (no positional weighting); padding rows are 0', () => {
    const t = plain.transportPlans(seqs);
    expect(t.positionWeighted).toBe(false);
    for (const plan of t.plans) {
      for (let b = 0; b < t.batch; ++b) {
        const n = t.lengths[b]!;
        const cols = new Float64Array(t.p);
        let mass = 0;
        for (let i = 0; i < t.nMax; ++i) {
          let row = 0;
          for (let j = 0; j < t.p; ++j) {
            const v = plan[(b * t.nMax + i) * t.p + j]!;
            expect(v).toBeGreaterThanOrEqual(0);
            row += v;
            cols[j]! += v;
          }
          if (i < n) expect(Math.abs(row - 1 / n)).toBeLessThan(1e-5 / n);
          else expect(row).toBe(0);
          mass += row;
        }
        expect(mass).toBeCloseTo(1, 4);
        // After the fixed number of Sinkhorn iterations the columns are within 0.1% (rows are exact).
        for (let j = 0; j < t.p; ++j) expect(Math.abs(cols[j]! - 1 / t.p)).toBeLessThan(1e-3 / t.p);
      }
    }
  });

  it('are the unweighted plans times exp(-(i/n - j/p)^2 / sigma_pos^2) when weighted', () => {
    expect(sigma).toBeGreaterThan(0); // the default model weights by position (data/models/README.md)
    const a = weighted.transportPlans(seqs);
    const b = plain.transportPlans(seqs);
    for (let r = 0; r < a.q; ++r) {
      for (let s = 0; s < a.batch; ++s) {
        const n = a.lengths[s]!;
        for (let i = 0; i < n; ++i) {
          for (let j = 0; j < a.p; ++j) {
            const at = (s * a.nMax + i) * a.p + j;
            const w = Math.exp(-((i / n - j / a.p) ** 2) / (sigma * sigma));
            expect(Math.abs(a.plans[r]![at]! - w * b.plans[r]![at]!)).toBeLessThan(1e-7);
          }
        }
      }
    }
  });
});
