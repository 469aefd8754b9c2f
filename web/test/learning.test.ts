// Learning in the browser beyond a new head: an OTKE model learnt unsupervised from the user's own sequences (or
// vector sets) then given a head from a few labels, and a GraphiT model's output layer refitted on labelled SMILES.
// Both save model files the native CLI reads and predicts with as the wasm build does (to 1e-4), and both stop
// when their progress callback says so, leaving models and memory as they were.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, InductiveError, type GraphitModel, type OtkeModel } from '../src/index.js';
import { promoters, readNpy } from './support/otke.js';

const ind = await init();
const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const CLI = process.env.INDUCTIVE_CLI ?? repo('build/native-release/bin/inductive');
if (!existsSync(CLI)) throw new Error(`learning tests: the native CLI ${CLI} is missing (npm test builds it first)`);
const work = mkdtempSync(join(tmpdir(), 'inductive-learning-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function cli(...args: string[]): string {
  return execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A .npy file (format 1.0, C order) of a float32 or int32 array. */
function npy(data: Float32Array | Int32Array, shape: number[], descr: '<f4' | '<i4'): Uint8Array {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, ...new TextEncoder().encode('NUMPY'), 1, 0, header.length & 255, header.length >> 8], 0);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

function expectCancelled(body: () => unknown): void {
  try {
    body();
  } catch (e) {
    expect(e).toBeInstanceOf(InductiveError);
    expect((e as InductiveError).code).toBe('cancelled');
    return;
  }
  throw new Error('expected InductiveError cancelled');
}

const pos = promoters('ecoli_prom_150.fa').map((r) => r.sequence);
const neg = promoters('ecoli_non_prom_150.fa').map((r) => r.sequence);
// The settings of the CLI's small test model (tests/native/test_cli_otke.py).
const SMALL = { k: 8, anchors: 16, p: 8, iters: 30, seed: 3 };

/** `inductive otke fit` of the vendored E. coli promoters with SMALL's settings (and `extra` flags) into `file`. */
function nativeFit(file: string, ...extra: string[]): string {
  const settings = ['--kmer', '8', '--anchors', '16', '--p', '8', '--iters', '30', '--seed', '3'];
  const classes = ['promoter=ecoli_prom_150.fa', 'non_promoter=ecoli_non_prom_150.fa'].flatMap((c) => {
    const [name, path] = c.split('=');
    return ['--class', `${name}=${repo(`data/promoters/${path}`)}`];
  });
  return cli('otke', 'fit', '--quiet', ...classes, ...settings, ...extra, '--out', file);
}

describe("fitOtke: unsupervised OTKE from the user's sequences, then a head from a few labels", () => {
  let base: OtkeModel;
  let tuned: OtkeModel;
  const stages: [string, number][] = [];

  beforeAll(() => {
    base = ind.fitOtke([...pos, ...neg], {
      ...SMALL,
      onProgress: (s, f) => {
        stages.push([s, f]);
      },
    });
    const few = [...pos.slice(0, 6), ...neg.slice(0, 6)];
    tuned = base.fitHead(few, [...Array(6).fill('promoter'), ...Array(6).fill('non_promoter')]);
  });
  afterAll(() => {
    base.dispose();
    tuned.dispose();
  });

  it('makes a model of the asked shape, without a head, reporting progress to the end', () => {
    expect(base.config.input).toEqual({ type: 'sequence', alphabet: 'dna', k: 8 });
    expect(base.outputDim).toBe(8 * 16);
    expect(base.labels).toEqual([]);
    expect(base.producer).toBe(ind.producer);
    expect(stages.length).toBeGreaterThan(2);
    expect(stages.at(-1)![1]).toBe(1);
  });

  it('learns features a 12-label head separates promoters with', () => {
    const predicted = tuned.predict([...pos, ...neg]).labels;
    const correct = predicted.filter((l, i) => l === (i < 150 ? 'promoter' : 'non_promoter')).length;
    expect(correct / 300).toBeGreaterThan(0.7);
  });

  it('saves a file the native CLI embeds and evaluates as the wasm build does', () => {
    const file = join(work, 'browser-fitted.safetensors');
    writeFileSync(file, tuned.toBytes());
    const fasta = join(work, 'some.fa');
    const some = [...pos.slice(20, 30), ...neg.slice(20, 30)];
    writeFileSync(fasta, some.map((s, i) => `>s${i}\n${s}\n`).join(''));
    cli('otke', 'embed', '--quiet', '--model', file, '--fasta', fasta, '--out', join(work, 'native.npy'));
    const native = readNpy(new Uint8Array(readFileSync(join(work, 'native.npy'))));
    const ours = tuned.embedSequences(some).embeddings;
    expect(native.shape).toEqual([20, 128]);
    let worst = 0;
    for (let i = 0; i < ours.length; ++i) worst = Math.max(worst, Math.abs(ours[i]! - native.data[i]!));
    expect(worst).toBeLessThan(1e-4);
    const report = JSON.parse(
      cli(
        'otke',
        'eval',
        '--quiet',
        '--model',
        file,
        '--class',
        `promoter=${repo('data/promoters/ecoli_prom_150.fa')}`,
        '--class',
        `non_promoter=${repo('data/promoters/ecoli_non_prom_150.fa')}`,
      ),
    );
    const predicted = tuned.predict([...pos, ...neg]).labels;
    const correct = predicted.filter((l, i) => l === (i < 150 ? 'promoter' : 'non_promoter')).length;
    expect(report.accuracy).toBeCloseTo(correct / 300, 10);
  });

  it('is as good as the native fit of the same data, settings and seed', () => {
    // One-hot k-mers are at exactly equal distances from many k-means centres; which way the two builds' float
    // rounding breaks those ties differs (FMA and Eigen's GEMM kernels natively, scalar SIMD128 in wasm), so the
    // anchors differ. Equally good, though: a head on all 300 labels does as well on either.
    const file = join(work, 'native-fitted.safetensors');
    nativeFit(file, '--eps', '0.5');
    const native = ind.loadOtkeModel(new Uint8Array(readFileSync(file)));
    const all = [...pos, ...neg];
    const truth = all.map((_, i) => (i < 150 ? 'promoter' : 'non_promoter'));
    const accuracy = (m: OtkeModel): number => {
      const fitted = m.fitHead(all, truth, { lambda: 0.0625 });
      const correct = fitted.predict(all).labels.filter((l, i) => l === truth[i]).length;
      fitted.dispose();
      return correct / all.length;
    };
    const ours = accuracy(base),
      theirs = accuracy(native);
    native.dispose();
    expect(Math.abs(ours - theirs)).toBeLessThan(0.05);
    expect(ours).toBeGreaterThan(0.8);
  });

  it('fitHead({ holdoutFraction, seed }) is the head `otke fit` fits: one recipe, the same holdout, grid and lambda', () => {
    const file = join(work, 'native-head.safetensors');
    const summary = JSON.parse(nativeFit(file, '--val-fraction', '0.25'));
    const native = ind.loadOtkeModel(new Uint8Array(readFileSync(file)));
    const all = [...pos, ...neg];
    const truth = all.map((_, i) => (i < 150 ? 'promoter' : 'non_promoter'));
    const ours = native.fitHead(all, truth, { classes: ['promoter', 'non_promoter'], holdoutFraction: 0.25, seed: 3 });
    try {
      const r = ours.headFit!;
      expect(summary.n_val).toBe(76); // round(0.25 * 150) = 38 of each class
      expect(r.lambdaChoice).toBe('holdout');
      expect(summary.head.lambda_choice).toBe('holdout');
      // The thesis' grid 2^-5 .. 2^-20 by default with a holdout, on both sides.
      expect(r.lambdaPath!.map(([l]) => l)).toEqual(Array.from({ length: 16 }, (_, i) => 2 ** (-5 - i)));
      expect(summary.head.lambda_path.map(([l]: number[]) => l)).toEqual(r.lambdaPath!.map(([l]) => l));
      // The same holdout: the same accuracy at every lambda, but for a sample or two at the weakest penalties, where
      // the nearly unregularised fit is ill-conditioned and the embeddings' 1e-5 (native vs wasm) moves a boundary.
      r.lambdaPath!.forEach(([l, acc], g) => {
        const theirs = summary.head.lambda_path[g][1] as number;
        if (l! >= 2 ** -15) expect(acc).toBe(theirs);
        else expect(Math.abs(acc! - theirs)).toBeLessThanOrEqual(2 / 76 + 1e-12);
      });
      expect(r.lambda).toBe(summary.head.lambda);
      expect(r.holdoutAccuracy).toBeCloseTo(summary.head.holdout_accuracy, 12);
      // And the same head, up to the embeddings' and L-BFGS's tolerances.
      const a = ours.predict(all).probabilities,
        b = native.predict(all).probabilities;
      let worst = 0;
      for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      expect(worst).toBeLessThan(1e-3);
    } finally {
      ours.dispose();
      native.dispose();
    }
  });

  // The ablations and the barycenter update too: the same options as CLI flags and as fitOtke options. The
  // barycenter at eps 0.1: at eps 0.01 its plans are sharp enough that float rounding and the iteration at
  // which each plan's Sinkhorn meets its tolerance differ between the builds, and the references agree to ~4e-3.
  it.each([
    { name: 'default', flags: [], options: {} },
    {
      name: 'attention plan, sinusoidal encoding',
      flags: ['--plan', 'attention', '--sinusoidal'],
      options: { plan: 'attention', sinusoidal: true },
    },
    {
      name: 'barycenter references, q 2',
      flags: ['--reference-update', 'barycenter', '--q', '2', '--barycenter-iters', '4', '--barycenter-eps', '0.1'],
      options: { referenceUpdate: 'barycenter', q: 2, barycenterIters: 4, barycenterEps: 0.1 },
    },
  ] as const)('equals the native fit exactly where no distances tie: vector sets ($name)', ({ flags, options }) => {
    const batch = 40,
      nMax = 10,
      dim = 6;
    let state = 11;
    const x = Float32Array.from({ length: batch * nMax * dim }, () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 2 ** 32 - 0.5;
    });
    const lengths = Int32Array.from({ length: batch }, (_, b) => 5 + (b % 6));
    writeFileSync(join(work, 'x.npy'), npy(x, [batch, nMax, dim], '<f4'));
    writeFileSync(join(work, 'n.npy'), npy(lengths, [batch], '<i4'));
    writeFileSync(
      join(work, 'y.npy'),
      npy(
        Int32Array.from({ length: batch }, (_, b) => b % 2),
        [batch],
        '<i4',
      ),
    );
    const file = join(work, 'native-sets.safetensors');
    cli(
      'otke',
      'fit',
      '--quiet',
      '--sets',
      join(work, 'x.npy'),
      '--lengths',
      join(work, 'n.npy'),
      '--labels',
      join(work, 'y.npy'),
      '--anchors',
      '8',
      '--p',
      '4',
      '--iters',
      '10',
      '--seed',
      '5',
      ...flags,
      '--out',
      file,
    );
    const native = ind.loadOtkeModel(new Uint8Array(readFileSync(file)));
    const ours = ind.fitOtke(
      { x, shape: { batch, nMax, dim }, lengths },
      { anchors: 8, p: 4, iters: 10, seed: 5, ...options },
    );
    expect(ours.config.pooling).toEqual({ ...native.config.pooling });
    if ('plan' in options) expect(ours.config.pooling).toMatchObject({ plan: 'attention', sinusoidal: true });
    const a = native.embedSets(x, { batch, nMax, dim }, lengths).embeddings;
    const b = ours.embedSets(x, { batch, nMax, dim }, lengths).embeddings;
    native.dispose();
    ours.dispose();
    let worst = 0,
      scale = 0;
    for (let i = 0; i < a.length; ++i) {
      worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      scale = Math.max(scale, Math.abs(a[i]!));
    }
    expect(worst).toBeLessThan(1e-4 * scale);
  });

  it('learns from vector sets too', () => {
    const batch = 30,
      nMax = 12,
      dim = 5;
    let state = 7;
    const x = Float32Array.from({ length: batch * nMax * dim }, () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 2 ** 32 - 0.5;
    });
    const lengths = Int32Array.from({ length: batch }, (_, b) => 6 + (b % 7));
    const model = ind.fitOtke({ x, shape: { batch, nMax, dim }, lengths }, { anchors: 8, p: 4, seed: 1 });
    expect(model.config.input).toEqual({ type: 'vectors', dim });
    const e = model.embedSets(x, { batch, nMax, dim }, lengths);
    expect(e.dim).toBe(32);
    expect(e.embeddings.every(Number.isFinite)).toBe(true);
    model.dispose();
  });

  it('refuses bad input with a precise error', () => {
    expect(() => ind.fitOtke([], SMALL)).toThrow(/no training sample/);
    expect(() => ind.fitOtke(['ACGT'], { k: 8 })).toThrow(InductiveError);
    expect(() => ind.fitOtke(pos, { kmer: 8 } as never)).toThrow(/unknown option 'kmer'/);
    expect(() => ind.fitOtke(pos, { pooling: 'avg' as never })).toThrow(/pooling/);
    expect(() => ind.fitOtke(pos, { ...SMALL, plan: 'dot' as never })).toThrow(
      /pooling.plan must be sinkhorn or attention/,
    );
    expect(() => ind.fitOtke(pos, { ...SMALL, sinusoidal: 1 as never })).toThrow(/sinusoidal must be a boolean/);
    expect(() => ind.fitOtke(pos, { ...SMALL, referenceUpdate: 'mean' as never })).toThrow(
      /referenceUpdate must be kmeans or barycenter: got 'mean'/,
    );
    expect(() => ind.fitOtke(pos, { ...SMALL, referenceUpdate: 'barycenter', barycenterEps: 0 })).toThrow(
      /barycenter: eps must be/,
    );
    expect(() => ind.fitOtke('ACGT' as never)).toThrow(/array of sequences or vector sets/);
  });

  it('stops when onProgress returns false, and a cancelled fit leaks nothing', () => {
    expectCancelled(() => ind.fitOtke(pos, { ...SMALL, onProgress: () => false }));
    const before = ind.memoryBytes;
    for (let i = 0; i < 5; ++i) expectCancelled(() => ind.fitOtke(pos, { ...SMALL, onProgress: () => false }));
    expect(ind.memoryBytes).toBe(before);
    // Cancelled half-way through a stage (after the first reports) too.
    let calls = 0;
    expectCancelled(() => ind.fitOtke(pos, { ...SMALL, onProgress: () => ++calls < 3 }));
    expect(calls).toBe(3);
  });

  it('takes 10^6 sequences as a hostile FASTA gives them: the fit completes, embedding is cancellable', () => {
    const million = Array.from({ length: 1_000_000 }, (_, i) => pos[i % 150]!);
    // Every k-mer's features (10^6 x 74 x 32 floats) do not fit in wasm32: the fit samples maxSamples k-mer
    // positions first and builds only theirs (core fit_otke_unsupervised from sequences).
    const stages = new Set<string>();
    const learnt = ind.fitOtke(million, { ...SMALL, onProgress: (stage) => void stages.add(stage) });
    expect([...stages]).toEqual(expect.arrayContaining(['anchors (spherical k-means)', 'reference (k-means)']));
    const e = learnt.embedSequences(pos.slice(0, 3));
    expect(e.embeddings.every(Number.isFinite)).toBe(true);
    learnt.dispose();
    // Embedding goes by batches: progress keeps coming, and the caller can stop it.
    let reports = 0;
    expectCancelled(() => tuned.embedSequences(million, { onProgress: () => ++reports < 4 }));
    expect(reports).toBe(4);
    expect(tuned.predict(pos.slice(0, 2)).probabilities.every(Number.isFinite)).toBe(true); // still usable
  });

  it('cancels fitHead and embedSequences too, leaving the model as it was', () => {
    const before = tuned.predict(pos.slice(0, 5)).probabilities;
    expectCancelled(() =>
      tuned.fitHead(pos.slice(0, 4).concat(neg.slice(0, 4)), [0, 0, 0, 0, 1, 1, 1, 1], {
        onProgress: (stage) => stage !== 'fit',
      }),
    );
    expectCancelled(() => tuned.embedSequences(pos, { batchSize: 10, onProgress: (_, f) => f < 0.5 }));
    expect(tuned.predict(pos.slice(0, 5)).probabilities).toEqual(before);
  });
});

describe('GraphitModel.refitHead: a new task on labelled SMILES with the encoder frozen', () => {
  let model: GraphitModel;
  let refit: GraphitModel;
  let smiles: string[];
  let labels: string[];
  const stages = new Set<string>();

  beforeAll(() => {
    model = ind.loadGraphitModel(new Uint8Array(readFileSync(repo('data/models/graphit-mutag.safetensors'))));
    // MoleculeNet BBBP (blood-brain barrier penetration), the molecules whose atoms the MUTAG model knows:
    // the first 20 of each class.
    const rows = readFileSync(repo('data/molecules/bbbp.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const i = line.lastIndexOf(',');
        return [line.slice(0, i), line.slice(i + 1)] as const;
      })
      .filter(([s]) => {
        try {
          return ind.parseSmiles(s).atoms.every((a) => model.nodeLabels.includes(a));
        } catch {
          return false;
        }
      });
    const pick = [...rows.filter(([, y]) => y === '1').slice(0, 20), ...rows.filter(([, y]) => y === '0').slice(0, 20)];
    smiles = pick.map(([s]) => s);
    labels = pick.map(([, y]) => (y === '1' ? 'permeable' : 'non-permeable'));
    refit = model.refitHead(smiles, labels, {
      onProgress: (s) => {
        stages.add(s);
      },
    });
  });
  afterAll(() => {
    model.dispose();
    refit.dispose();
  });

  it('is a classifier of the new classes that fits its labels, from a frozen encoder', () => {
    expect(refit.labels).toEqual(['permeable', 'non-permeable']);
    expect(refit.headFit!.lambdaChoice).toBe('cross-validation');
    expect(refit.headFit!.trainAccuracy).toBeGreaterThan(0.7);
    const p = refit.predictSmiles(smiles);
    const correct = p.labels.filter((l, i) => l === labels[i]).length;
    expect(correct / smiles.length).toBeCloseTo(refit.headFit!.trainAccuracy, 10);
    expect([...stages].slice(0, 2)).toEqual(['prepare', 'hidden']);
    // The attention maps are the frozen encoder's: unchanged by the refit.
    const a = model.attention(smiles[0]!),
      b = refit.attention(smiles[0]!);
    expect(b.layers).toEqual(a.layers);
  });

  it('saves a file that loads back identically and that the native CLI predicts with', () => {
    const bytes = refit.toBytes();
    const back = ind.loadGraphitModel(bytes);
    expect(back.predictSmiles(smiles).probabilities).toEqual(refit.predictSmiles(smiles).probabilities);
    back.dispose();
    const file = join(work, 'refit.safetensors');
    writeFileSync(file, bytes);
    const some = smiles.slice(0, 5);
    cli('graphit', 'predict', '--model', file, ...some.flatMap((s) => ['--smiles', s]), '--out', join(work, 'g.npy'));
    const native = readNpy(new Uint8Array(readFileSync(join(work, 'g.npy'))));
    const ours = refit.predictSmiles(some).probabilities;
    expect(native.shape).toEqual([5, 2]);
    for (let i = 0; i < ours.length; ++i) expect(Math.abs(ours[i]! - native.data[i]!)).toBeLessThan(1e-4);
  });

  it('stops when onProgress returns false, leaving the model as it was', () => {
    const before = model.predictSmiles(smiles).probabilities;
    for (const stop of ['prepare', 'hidden', 'cross-validation']) {
      expectCancelled(() => model.refitHead(smiles, labels, { onProgress: (s) => s !== stop }));
    }
    expect(model.predictSmiles(smiles).probabilities).toEqual(before);
  });

  it('predicts many molecules in batches, with progress, cancellation and whole-list molecule numbers', () => {
    const many = Array.from({ length: 100 }, (_, i) => smiles[i % smiles.length]!);
    const seen: number[] = [];
    const chunked = model.predictSmiles(many, {
      batchSize: 30,
      onProgress: (_, f) => {
        seen.push(f);
      },
    });
    const whole = model.predictSmiles(many).probabilities; // batches of other sizes: rounding may differ
    chunked.probabilities.forEach((v, i) => expect(Math.abs(v - whole[i]!)).toBeLessThan(1e-6));
    expect(seen).toEqual([0, 0.3, 0.6, 0.9, 1]);
    expectCancelled(() => model.predictSmiles(many, { batchSize: 30, onProgress: (_, f) => f < 0.5 }));
    const bad = [...many.slice(0, 70), 'C1CC', ...many.slice(0, 5)];
    expect(() => model.predictSmiles(bad, { batchSize: 30 })).toThrow(/^predictSmiles: molecule 70 \('C1CC'\)/);
  });

  it("refuses molecules past the build's size limit before any work, naming it", () => {
    expect(ind.limits.maxGraphNodes).toBe(1024);
    const big = 'C'.repeat(ind.limits.maxGraphNodes + 1);
    expect(() => model.predictSmiles(big)).toThrow(
      /the molecule has 1025 atoms; this build runs graphs of at most 1024 atoms/,
    );
    expect(() => model.attention(big)).toThrow(InductiveError);
    expect(() => model.predictGraph({ n: 2000, edges: [[0, 1]], labels: Array(2000).fill('C') })).toThrow(
      /at most 1024 nodes/,
    );
  });

  it('refuses bad input with a precise error', () => {
    expect(() => model.refitHead(smiles.slice(0, 3), labels)).toThrow(/3 molecules for 40 labels/);
    expect(() => model.refitHead(['CCS', 'CCO'], ['a', 'b'])).toThrow(/molecule 0 \('CCS'\).*S/);
    expect(() => model.refitHead(['CCO', 'CCN'], ['a', 'a'])).toThrow(/at least 2 classes/);
  });
});
