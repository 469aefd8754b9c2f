// A model file trained on a GPU (`inductive otke train --backend cuda` on an NVIDIA H200, bench/gpu/check.sh) loads
// unchanged in the browser build: its embeddings equal the native CPU CLI's (committed reference) within 1e-4 and
// its predictions are the file's head applied to them. data/models/README.md says how both files were made.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { init } from '../src/index.js';
import { readNpy, readSafetensors, referenceSequences } from './support/otke.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const MODEL = repo('data/models/otke-promoters-cuda-h200.safetensors');
const REFERENCE = repo('data/models/otke-promoters-cuda-h200.reference.npy');
const ind = await init();

describe('an OTKE model trained on CUDA', () => {
  const bytes = new Uint8Array(readFileSync(MODEL));
  const model = ind.loadOtkeModel(bytes);

  it('is an ordinary model file: identity 4-mers, two references with positional weighting, a head', () => {
    const { config } = model;
    expect(config.embedding.type).toBe('identity');
    expect(config.pooling.type === 'otk' && [config.pooling.q, config.pooling.p]).toEqual([2, 32]);
    expect(model.labels).toEqual(['promoter', 'non_promoter']);
  });

  it('embeds as the native CPU CLI does (max abs diff <= 1e-4) and predicts with the head of the file', () => {
    const ref = readNpy(new Uint8Array(readFileSync(REFERENCE)));
    expect(ref.shape).toEqual([8, model.outputDim]);
    const { embeddings, dim } = model.embedSequences(referenceSequences());
    let diff = 0,
      spread = 0;
    for (let i = 0; i < embeddings.length; ++i) diff = Math.max(diff, Math.abs(embeddings[i]! - ref.data[i]!));
    for (let j = 0; j < dim; ++j) spread = Math.max(spread, Math.abs(embeddings[j]! - embeddings[dim + j]!));
    expect(diff).toBeLessThanOrEqual(1e-4);
    expect(spread).toBeGreaterThan(1e-3); // the comparison is not between zeros
    const file = readSafetensors(bytes);
    const W = file.tensors.get('head.weight')!.data,
      bias = file.tensors.get('head.bias')!.data;
    const pred = model.predict(referenceSequences());
    for (let b = 0; b < 8; ++b)
      for (let c = 0; c < 2; ++c) {
        let z = bias[c]!;
        for (let j = 0; j < dim; ++j) z += W[c * dim + j]! * ref.data[b * dim + j]!;
        expect(Math.abs(pred.logits[b * 2 + c]! - z)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(z)));
      }
    model.dispose();
  });
});
