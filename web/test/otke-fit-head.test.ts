// fitHead: a new linear head on a few labelled samples, in the browser. It must fit them (training accuracy up),
// leave the original model alone, survive toBytes/loadOtkeModel exactly, choose lambda as documented, and report
// progress.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type HeadFitReport, type OtkeModel } from '../src/index.js';
import { classNames, editModel, labelledPromoters, modelBytes, readSafetensors, writeModel } from './support/otke.js';

const ind = await init();

/** The first `n` sequences of each class of the vendored data. */
function firstOfEachClass(n: number, classes: string[]): { sequences: string[]; labels: string[] } {
  const data = labelledPromoters(classes);
  const pick = [...Array(n).keys(), ...Array.from({ length: n }, (_, i) => 150 + i)];
  return { sequences: pick.map((i) => data.sequences[i]!), labels: pick.map((i) => data.labels[i]!) };
}

/** The model file with its head weights and biases set to 0. */
function zeroHead(bytes: Uint8Array): Uint8Array {
  const parsed = readSafetensors(bytes);
  for (const name of ['head.weight', 'head.bias']) parsed.tensors.get(name)!.data.fill(0);
  return writeModel(parsed.config, parsed.tensors.values());
}

function accuracy(model: OtkeModel, sequences: string[], labels: string[]): number {
  const pred = model.predict(sequences);
  return pred.labels.filter((l, i) => l === labels[i]).length / sequences.length;
}

describe('fitHead on the default model', () => {
  let data: ReturnType<typeof labelledPromoters>;
  let model: OtkeModel;
  // A handful of labelled sequences: for each class, the first 2 the committed head gets wrong and 2 it gets right.
  let few: { sequences: string[]; labels: string[] };
  const fitted: OtkeModel[] = [];
  const keep = (m: OtkeModel): OtkeModel => (fitted.push(m), m);

  beforeAll(() => {
    model = ind.loadOtkeModel(modelBytes());
    data = labelledPromoters(model.labels);
    const pred = model.predict(data.sequences);
    const pick: number[] = [];
    for (const cls of model.labels) {
      const of = data.labels.map((l, i) => (l === cls ? i : -1)).filter((i) => i >= 0);
      pick.push(
        ...of.filter((i) => pred.labels[i] !== cls).slice(0, 2),
        ...of.filter((i) => pred.labels[i] === cls).slice(0, 2),
      );
    }
    few = { sequences: pick.map((i) => data.sequences[i]!), labels: pick.map((i) => data.labels[i]!) };
  });
  afterAll(() => {
    for (const m of fitted) m.dispose();
    model.dispose();
  });

  it('fits a handful of labelled sequences exactly with a weak penalty, even those the committed head gets wrong', () => {
    const before = accuracy(model, few.sequences, few.labels);
    expect(before).toBe(0.5);
    const tuned = keep(model.fitHead(few.sequences, few.labels, { lambda: 2 ** -12 }));
    const report = tuned.headFit!;
    expect(report.trainAccuracy).toBe(1);
    expect(accuracy(tuned, few.sequences, few.labels)).toBe(1);
    expect(tuned.labels).toEqual(model.labels); // string labels among the model's keep its class order
    expect(report.classCounts).toEqual(model.labels.map((c) => few.labels.filter((l) => l === c).length));
  });

  it('improves training accuracy over a head that knows nothing, and generalises', () => {
    // The committed model with its head zeroed: every probability 1/2, every sample called the first class.
    const blank = keep(ind.loadOtkeModel(zeroHead(modelBytes())));
    const easy = firstOfEachClass(4, model.labels);
    const before = accuracy(blank, easy.sequences, easy.labels);
    expect(before).toBe(0.5);
    const tuned = keep(blank.fitHead(easy.sequences, easy.labels));
    expect(tuned.headFit!.lambdaChoice).toBe('default');
    expect(tuned.headFit!.trainAccuracy).toBeGreaterThan(before);
    expect(accuracy(tuned, easy.sequences, easy.labels)).toBe(tuned.headFit!.trainAccuracy);
    // 8 labelled sequences, 300 to predict: well above chance.
    expect(accuracy(tuned, data.sequences, data.labels)).toBeGreaterThan(0.6);
  });

  it('returns a new model and leaves the original unchanged', () => {
    const before = model.predict(data.sequences.slice(0, 20));
    const tuned = keep(model.fitHead(few.sequences, few.labels));
    expect(tuned).not.toBe(model);
    expect(model.predict(data.sequences.slice(0, 20))).toEqual(before);
    expect(model.headFit).toBeNull();
    expect(tuned.config.embedding).toEqual(model.config.embedding);
    expect(tuned.config.pooling).toEqual(model.config.pooling);
    expect(tuned.embedSequences(few.sequences)).toEqual(model.embedSequences(few.sequences));
  });

  it('round-trips through toBytes and loadOtkeModel exactly', () => {
    const tuned = keep(model.fitHead(few.sequences, few.labels));
    const bytes = tuned.toBytes();
    const info = ind.readModelInfo(bytes);
    expect(info.model).toBe('otke');
    expect(info.producer).toBe(ind.producer);
    expect(info.tensors.map((t) => t.name)).toContain('head.weight');
    const again = keep(ind.loadOtkeModel(bytes));
    expect(again.labels).toEqual(tuned.labels);
    expect(again.config).toEqual(tuned.config);
    expect(again.headFit).toBeNull();
    const seqs = data.sequences.slice(100, 220);
    expect(again.predict(seqs)).toEqual(tuned.predict(seqs));
    expect(again.toBytes()).toEqual(bytes); // writing is deterministic
    // The unchanged model writes the file it was read from, tensor for tensor.
    expect(keep(ind.loadOtkeModel(model.toBytes())).predict(seqs)).toEqual(model.predict(seqs));
  });

  it('gives an embedding-only model (no head) a head', () => {
    const bare = keep(
      ind.loadOtkeModel(
        editModel(
          modelBytes(),
          (c) => {
            c.head = { classes: 0, labels: [] };
          },
          ['head.weight', 'head.bias'],
        ),
      ),
    );
    expect(bare.classes).toBe(0);
    const tuned = keep(bare.fitHead(few.sequences, few.labels, { lambda: 2 ** -12 }));
    expect(tuned.classes).toBe(2);
    expect(tuned.labels).toEqual([...new Set(few.labels)]); // first appearance
    expect(tuned.headFit!.trainAccuracy).toBe(1);
  });

  it('fits the same head from embeddings as from sequences', () => {
    const { embeddings } = model.embedSequences(few.sequences);
    const a = keep(model.fitHead(few.sequences, few.labels));
    const b = keep(model.fitHead(embeddings, few.labels));
    expect(b.headFit).toEqual(a.headFit);
    expect(b.toBytes()).toEqual(a.toBytes());
  });

  it('takes labels as names, indices or an Int32Array, and new class names', () => {
    const idx = few.labels.map((l) => model.labels.indexOf(l));
    const byName = keep(model.fitHead(few.sequences, few.labels));
    const byIndex = keep(model.fitHead(few.sequences, idx));
    const byInt32 = keep(model.fitHead(few.sequences, Int32Array.from(idx)));
    expect(byIndex.toBytes()).toEqual(byName.toBytes());
    expect(byInt32.toBytes()).toEqual(byName.toBytes());
    const { positive } = classNames(model.labels);
    const rename = (l: string): string => (l === positive ? 'yes' : 'no');
    const renamed = keep(model.fitHead(few.sequences, few.labels.map(rename), { classes: ['no', 'yes'] }));
    expect(renamed.labels).toEqual(['no', 'yes']);
    expect(renamed.predict(few.sequences).labels).toEqual(byName.predict(few.sequences).labels.map(rename));
  });

  it('chooses lambda by cross-validation with >= minPerClass labels per class, else uses the default', () => {
    const ten = firstOfEachClass(10, model.labels);
    const cv = keep(model.fitHead(ten.sequences, ten.labels)).headFit!;
    expect(cv.lambdaChoice).toBe('cross-validation');
    expect(cv.folds).toBe(5);
    expect(cv.lambdaPath).toHaveLength(22); // 2^1 .. 2^-20, each [lambda, accuracy, loss]
    expect(cv.lambdaPath!.map(([l]) => l)).toContain(cv.lambda);
    const best = cv.lambdaPath!.find(([l]) => l === cv.lambda)!;
    expect(best[1]).toBe(cv.cvAccuracy);
    expect(Math.max(...cv.lambdaPath!.map(([, a]) => a))).toBe(cv.cvAccuracy);
    const four = keep(model.fitHead(few.sequences, few.labels, { minPerClass: 4 })).headFit!;
    expect(four).toMatchObject({ lambdaChoice: 'cross-validation', folds: 4 });
    const small = keep(model.fitHead(few.sequences, few.labels)).headFit!; // 4 + 4 < 10 per class
    expect(small.lambdaChoice).toBe('default');
    expect(small.lambda).toBe(0.0625);
    expect(small.cvAccuracy).toBeUndefined();
    const given = keep(model.fitHead(few.sequences, few.labels, { lambda: 0.01 })).headFit!;
    expect(given).toMatchObject({ lambdaChoice: 'given', lambda: 0.01 });
  });

  it("chooses lambda on a holdout as the thesis' protocol does (the same recipe as `otke fit`)", () => {
    const twenty = firstOfEachClass(20, model.labels);
    const x = model.embedSequences(twenty.sequences).embeddings;
    const holdout = Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 5 === 0);
    const grid = [2 ** -5, 2 ** -6, 2 ** -7, 2 ** -8];
    const kept = keep(model.fitHead(x, twenty.labels, { holdout, lambdaGrid: grid }));
    const r = kept.headFit!;
    expect(r.lambdaChoice).toBe('holdout');
    expect(r.lambdaPath!.map(([l]) => l)).toEqual(grid); // strongest penalty first, each [lambda, holdout accuracy]
    expect(grid).toContain(r.lambda);
    expect(r.holdoutAccuracy).toBe(Math.max(...r.lambdaPath!.map(([, a]) => a)));
    // The head kept is the one fitted without the holdout: its accuracy there is the one reported.
    const dim = model.outputDim;
    const rows = new Float32Array(holdout.length * dim);
    holdout.forEach((i, k) => rows.set(x.subarray(i * dim, (i + 1) * dim), k * dim));
    const pred = kept.predictEmbeddings(rows);
    const right = holdout.filter((i, k) => pred.labels[k] === twenty.labels[i]).length;
    expect(right / holdout.length).toBeCloseTo(r.holdoutAccuracy!, 12);
    // refit: the chosen lambda again on every sample, a different head.
    const refit = keep(model.fitHead(x, twenty.labels, { holdout, lambdaGrid: grid, refit: true }));
    expect(refit.headFit!.lambda).toBe(r.lambda);
    expect(refit.predictEmbeddings(rows).logits).not.toEqual(pred.logits);
    expect(() => model.fitHead(x, twenty.labels, { holdout: [0, 40] })).toThrow(/holdout row 40 is not in \[0, 40\)/);
    expect(() => model.fitHead(x, twenty.labels, { holdout: [0.5] as never })).toThrow(/holdout must be an array/);
    expect(() => model.fitHead(x, twenty.labels, { lambdaGrid: [NaN] })).toThrow(/lambdaGrid must be an array/);
  });

  it('reports progress: embed, cross-validation, fit, each ending at 1', () => {
    const seen: [string, number][] = [];
    keep(
      model.fitHead(few.sequences, few.labels, {
        batchSize: 3,
        minPerClass: 4,
        onProgress: (s, f) => seen.push([s, f]),
      }),
    );
    const stages = [...new Set(seen.map(([s]) => s))];
    expect(stages).toEqual(['embed', 'cross-validation', 'fit']);
    for (const stage of stages) {
      const fractions = seen.filter(([s]) => s === stage).map(([, f]) => f);
      expect(fractions.at(-1)).toBe(1);
      for (let i = 1; i < fractions.length; ++i) expect(fractions[i]!).toBeGreaterThanOrEqual(fractions[i - 1]!);
    }
    expect(seen.filter(([s]) => s === 'embed').length).toBe(1 + Math.ceil(few.sequences.length / 3));
  });

  it('passes an error thrown by the progress callback on, and stays usable', () => {
    const boom = new Error('stop');
    for (const stage of ['embed', 'cross-validation']) {
      expect(() =>
        model.fitHead(few.sequences, few.labels, {
          minPerClass: 4,
          onProgress: (s) => {
            if (s === stage) throw boom;
          },
        }),
      ).toThrow(boom);
    }
    const report: HeadFitReport = keep(model.fitHead(few.sequences, few.labels)).headFit!;
    expect(report).toEqual(keep(model.fitHead(few.sequences, few.labels)).headFit);
  });
});
