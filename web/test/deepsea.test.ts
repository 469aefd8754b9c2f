// The DeepSEA-style OTKE model in the browser build: a model trained natively (conv front end -> OT pooling -> MLP
// head with dropout, multilabel outputs) loads unchanged, predicts what the native CLI predicts (to 1e-4), reports an
// independent sigmoid per label, and a new linear head can still be fitted on it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type OtkeModel } from '../src/index.js';
import { promoters, readNpy } from './support/otke.js';

const ind = await init();
const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const CLI = process.env.INDUCTIVE_CLI ?? repo('build/native-release/bin/inductive');
if (!existsSync(CLI)) throw new Error(`deepsea tests: the native CLI ${CLI} is missing (npm test builds it first)`);
const work = mkdtempSync(join(tmpdir(), 'inductive-deepsea-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cli = (...args: string[]): string =>
  execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// Each sequence labelled with the set of {promoter, b_subtilis} that applies (data/SOURCE.md).
const SETS = [
  ['promoter,b_subtilis', 'bsubtilis_prom_100.fa'],
  ['b_subtilis', 'bsubtilis_non_prom_100.fa'],
  ['promoter', 'ecoli_prom_150.fa'],
  ['-', 'ecoli_non_prom_150.fa'],
] as const;
const CLASSES = SETS.flatMap(([name, file]) => ['--class', `${name}=${repo(`data/promoters/${file}`)}`]);
const sequences = SETS.flatMap(([, file]) => promoters(file).map((r) => r.sequence));

describe('a natively trained DeepSEA-style model (multilabel, MLP head with dropout)', () => {
  let model: OtkeModel;
  let native: Float32Array;
  beforeAll(() => {
    const init = join(work, 'init.safetensors'),
      trained = join(work, 'trained.safetensors'),
      probs = join(work, 'probs.npy');
    cli(
      'otke', 'fit', '--quiet', ...CLASSES, '--multilabel', '--hidden', '16', '--dropout', '0.2',
      '--embedding', 'conv', '--kmer', '8', '--p', '8', '--sigma-pos', '0.1', '--iters', '30', '--seed', '3',
      '--out', init,
    ); // prettier-ignore
    cli('otke', 'train', '--quiet', ...CLASSES, '--init', init, '--epochs', '6', '--seed', '1', '--out', trained);
    cli('otke', 'eval', '--quiet', ...CLASSES, '--model', trained, '--probabilities', probs);
    native = readNpy(new Uint8Array(readFileSync(probs))).data as Float32Array;
    model = ind.loadOtkeModel(new Uint8Array(readFileSync(trained)));
  });
  afterAll(() => model?.dispose());

  it('loads with its head as the file describes it', () => {
    expect(model.multilabel).toBe(true);
    expect(model.labels).toEqual(['b_subtilis', 'promoter']);
    expect(model.config.head).toMatchObject({ classes: 2, hidden: 16, multilabel: true });
    expect(model.config.head.dropout).toBeCloseTo(0.2, 6);
    expect(model.config.embedding).toEqual({ type: 'conv', filters: 64 });
  });

  it('predicts the native probabilities to 1e-4: an independent sigmoid per label', () => {
    const p = model.predict(sequences);
    expect(p.multilabel).toBe(true);
    expect(p.probabilities.length).toBe(native.length);
    let worst = 0;
    for (let i = 0; i < native.length; ++i) worst = Math.max(worst, Math.abs(p.probabilities[i]! - native[i]!));
    expect(worst).toBeLessThan(1e-4);
    for (let i = 0; i < p.logits.length; ++i)
      expect(p.probabilities[i]).toBeCloseTo(1 / (1 + Math.exp(-p.logits[i]!)), 6);
    // Rows are not a distribution over the labels.
    expect(
      Array.from({ length: p.batch }, (_, b) => p.probabilities[2 * b]! + p.probabilities[2 * b + 1]!),
    ).not.toEqual(Array.from({ length: p.batch }, () => 1));
    // Label sets: those of probability > 0.5, possibly none.
    for (let b = 0; b < p.batch; ++b) {
      const want = model.labels.filter((_, c) => p.probabilities[2 * b + c]! > 0.5);
      expect(p.labelSets[b]).toEqual(want);
    }
    // Trained, not chance: a B. subtilis promoter is mostly both, an E. coli non-promoter mostly neither.
    const both = p.labelSets.slice(0, 100).filter((s) => s.length === 2).length;
    const none = p.labelSets.slice(350).filter((s) => s.length === 0).length;
    expect(both + none).toBeGreaterThan(150);
  });

  it('fits a new linear one-of-C head on its embeddings', () => {
    const few = [...sequences.slice(200, 210), ...sequences.slice(350, 360)];
    const labels = [...Array(10).fill('promoter'), ...Array(10).fill('other')];
    const fitted = model.fitHead(few, labels, { lambda: 0.0625 });
    try {
      expect(fitted.multilabel).toBe(false);
      expect(fitted.config.head.hidden).toBeUndefined();
      const p = fitted.predict(few);
      for (let b = 0; b < p.batch; ++b) expect(p.probabilities[2 * b]! + p.probabilities[2 * b + 1]!).toBeCloseTo(1, 5);
      expect(p.labelSets.every((s) => s.length === 1)).toBe(true);
    } finally {
      fitted.dispose();
    }
  });
});
