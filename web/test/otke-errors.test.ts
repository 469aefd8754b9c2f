// Every way an OTKE call can fail arrives as an InductiveError with the core's code and a message naming the
// problem, and the instance and the model stay usable afterwards. Models of sets of vectors are written here by
// the file spec (test/support), so this suite also runs without the committed default model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, InductiveError, type OtkeModel } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { editModel, modelBytes, referenceSequences, writeModel } from './support/otke.js';

const ind = await init();

// A vectors model: sets of 3-d vectors, identity embedding, OT pooling on 2 supports, optionally a 2-class head.
const VEC_CONFIG = {
  input: { type: 'vectors', dim: 3 },
  embedding: { type: 'identity' },
  pooling: { type: 'otk', p: 2, q: 1, eps: 0.5, iters: 50, sigma_pos: 0, scale: 'paper' },
  head: { classes: 0, labels: [] as string[] },
};
const REFS = {
  name: 'otk.references',
  dtype: 'F32' as const,
  shape: [1, 2, 3],
  data: new Float32Array([1, 0, 0, 0, 1, 0]),
};
const vectorsModel = (withHead = false): Uint8Array =>
  writeModel(
    withHead ? { ...VEC_CONFIG, head: { classes: 2, labels: ['a', 'b'] } } : VEC_CONFIG,
    withHead
      ? [
          REFS,
          {
            name: 'head.weight',
            dtype: 'F32',
            shape: [2, 6],
            data: new Float32Array([1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]),
          },
          { name: 'head.bias', dtype: 'F32', shape: [2], data: new Float32Array([0, 0]) },
        ]
      : [REFS],
  );

describe('loadOtkeModel refuses what is not a readable OTKE model', () => {
  it('needs a Uint8Array', () => {
    expectInductiveError(
      () => ind.loadOtkeModel([1, 2, 3] as unknown as Uint8Array),
      'invalid_argument',
      'Uint8Array',
      'Array',
    );
    expectInductiveError(() => ind.loadOtkeModel(new Uint8Array(0)), 'bad_model_file');
  });

  it('names a model of another kind', () => {
    // A kind this build has no schema for (a registered kind such as 'graphit' is first checked against its own
    // schema, and this fake config would fail that check instead).
    expectInductiveError(
      () => ind.loadOtkeModel(writeModel({ dim: 3 }, [REFS], 'kernel_svm')),
      'bad_model_file',
      "'kernel_svm'",
      'otke',
    );
  });

  it('names a file of a newer format version', () => {
    expectInductiveError(
      () => ind.loadOtkeModel(writeModel(VEC_CONFIG, [REFS], 'otke', 2)),
      'unsupported_version',
      'format_version 2',
    );
  });

  it('names truncated files, missing tensors, wrong shapes and unknown config keys', () => {
    const good = vectorsModel();
    expectInductiveError(() => ind.loadOtkeModel(good.subarray(0, good.length - 4)), 'bad_model_file');
    expectInductiveError(() => ind.loadOtkeModel(writeModel(VEC_CONFIG, [])), 'bad_model_file', 'otk.references');
    expectInductiveError(
      () => ind.loadOtkeModel(writeModel(VEC_CONFIG, [{ ...REFS, shape: [1, 3, 2] }])),
      'bad_model_file',
      'otk.references',
    );
    const typo = { ...VEC_CONFIG, pooling: { ...VEC_CONFIG.pooling, sigma: 1 } };
    expectInductiveError(
      () => ind.loadOtkeModel(writeModel(typo, [REFS])),
      'bad_model_file',
      "unknown key 'pooling.sigma'",
    );
  });

  it('names a model whose references hold NaN', () => {
    const nan = { ...REFS, data: new Float32Array([1, 0, 0, 0, NaN, 0]) };
    let caught: unknown;
    try {
      ind.loadOtkeModel(writeModel(VEC_CONFIG, [nan]));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InductiveError);
    expect((caught as InductiveError).code).toBe('bad_model_file');
    expect((caught as InductiveError).message).toContain('NaN');
  });
});

describe('a model of sets of vectors', () => {
  let model: OtkeModel;
  let headed: OtkeModel;
  beforeAll(() => {
    model = ind.loadOtkeModel(vectorsModel());
    headed = ind.loadOtkeModel(vectorsModel(true));
  });
  afterAll(() => {
    model.dispose();
    headed.dispose();
  });
  // Two sets padded to 3 elements: {e1, e2, e1} and {e2}.
  const x = new Float32Array([1, 0, 0, 0, 1, 0, 1, 0, 0, /**/ 0, 1, 0, 9, 9, 9, 9, 9, 9]);
  const shape = { batch: 2, nMax: 3, dim: 3 };
  const lengths = new Int32Array([3, 1]);

  it('embeds sets of any size, padding ignored', () => {
    const { batch, dim, embeddings } = model.embedSets(x, shape, lengths);
    expect([batch, dim]).toEqual([2, 6]);
    expect(embeddings.every(Number.isFinite)).toBe(true);
    const alone = model.embedSets(new Float32Array([0, 1, 0]), { batch: 1, nMax: 1, dim: 3 }, new Int32Array([1]));
    for (let c = 0; c < 6; ++c) expect(alone.embeddings[c]).toBeCloseTo(embeddings[6 + c]!, 6);
    expect(model.classes).toBe(0);
    expect(model.labels).toEqual([]);
  });

  it('refuses NaN features, empty sets, bad lengths and shapes', () => {
    const nan = x.slice();
    nan[4] = NaN;
    expectInductiveError(() => model.embedSets(nan, shape, lengths), 'invalid_argument', 'non-finite', 'set 0');
    // NaN in padding is never read.
    const padNaN = x.slice();
    padNaN[12] = NaN;
    expect(model.embedSets(padNaN, shape, lengths).embeddings).toEqual(model.embedSets(x, shape, lengths).embeddings);
    expectInductiveError(() => model.embedSets(x, shape, new Int32Array([3, 0])), 'invalid_argument', 'set 1 is empty');
    expectInductiveError(() => model.embedSets(x, shape, new Int32Array([4, 1])), 'invalid_argument', 'set 0');
    expectInductiveError(
      () => model.embedSets(new Float32Array(0), { batch: 0, nMax: 3, dim: 3 }, new Int32Array(0)),
      'invalid_argument',
      'empty batch',
    );
    expectInductiveError(
      () => model.embedSets(x, { batch: 2, nMax: 3, dim: 2 }, lengths),
      'shape_mismatch',
      '2 x 3 x 2',
    );
    expectInductiveError(
      () => model.embedSets(x.subarray(0, 9), { batch: 1, nMax: 9, dim: 1 }, new Int32Array([1])),
      'shape_mismatch',
      'dimension 1',
    );
    expectInductiveError(
      () => model.embedSets(x, shape, new Float32Array([3, 1]) as unknown as Int32Array),
      'invalid_argument',
      'Int32Array',
    );
    expectInductiveError(
      () => model.embedSets(Array.from(x) as unknown as Float32Array, shape, lengths),
      'invalid_argument',
      'Float32Array',
    );
    expectInductiveError(
      () => model.embedSets(x, { batch: 2.5, nMax: 3, dim: 3 }, lengths),
      'invalid_argument',
      'batch',
    );
  });

  it('refuses sequences', () => {
    expectInductiveError(() => model.embedSequences(['ACGT']), 'invalid_argument', 'sets of vectors');
  });

  it('refuses to predict without a head, predicts with one', () => {
    expectInductiveError(() => model.predictSets(x, shape, lengths), 'invalid_argument', 'no classifier head');
    expectInductiveError(() => model.predictEmbeddings(new Float32Array(6)), 'invalid_argument', 'no classifier head');
    const pred = headed.predictSets(x, shape, lengths);
    expect(pred.labels).toHaveLength(2);
    expect(pred.probabilities[0]! + pred.probabilities[1]!).toBeCloseTo(1, 6);
  });

  it('refuses NaN embeddings and bad labels when fitting a head', () => {
    const e = model.embedSets(x, shape, lengths).embeddings;
    const nan = e.slice();
    nan[2] = NaN;
    expectInductiveError(() => model.fitHead(nan, ['a', 'b']), 'invalid_argument', 'NaN');
    expectInductiveError(() => model.fitHead(e, ['a', 'a']), 'invalid_argument', 'at least 2 classes');
    expectInductiveError(() => model.fitHead(e, ['a', 'b', 'b']), 'shape_mismatch', '2 embeddings for 3 labels');
    expectInductiveError(() => model.fitHead(e.subarray(0, 5), ['a', 'b']), 'shape_mismatch', 'multiple');
    expectInductiveError(
      () => model.fitHead(e, ['a', 'b'], { classes: ['a', 'b', 'c'] }),
      'invalid_argument',
      "class 'c' has no labelled sample",
    );
    expectInductiveError(
      () => model.fitHead(e, ['a', 'x'], { classes: ['a', 'b'] }),
      'invalid_argument',
      "label 'x' of sample 1",
    );
    expectInductiveError(() => model.fitHead(e, [0, 1.5]), 'invalid_argument', 'sample 1');
    expectInductiveError(() => model.fitHead(e, [0, -1]), 'invalid_argument', 'sample 1');
    expectInductiveError(
      () => model.fitHead(e, [0, 'b'] as unknown as string[]),
      'invalid_argument',
      'all class names',
    );
    expectInductiveError(() => model.fitHead(e, [0, 2], { classes: ['a', 'b'] }), 'invalid_argument', 'out of range');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { lambda: -1 }), 'invalid_argument', 'lambda');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { classes: ['a', 'a'] }), 'invalid_argument', 'distinct');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { minPerClass: 1 }), 'invalid_argument', 'minPerClass');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { maxIter: 0 }), 'invalid_argument', 'maxIter');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { maxIter: 2.5 }), 'invalid_argument', 'maxIter');
    expectInductiveError(() => model.fitHead(e, ['a', 'b'], { tol: NaN }), 'invalid_argument', 'tol');
    expectInductiveError(
      () => model.fitHead(e, ['a', 'b'], { onProgress: 3 as unknown as () => void }),
      'invalid_argument',
      'onProgress',
    );
    const fitted = model.fitHead(e, ['a', 'b']);
    expect(fitted.labels).toEqual(['a', 'b']);
    expect(fitted.headFit!.lambdaChoice).toBe('default');
    fitted.dispose();
  });

  it('outlives the instance that loaded it; the instance refuses new models once disposed', async () => {
    const other = await init();
    const m = other.loadOtkeModel(vectorsModel());
    other.dispose();
    expect(m.embedSets(x, shape, lengths).embeddings).toEqual(model.embedSets(x, shape, lengths).embeddings);
    m.dispose();
    expectInductiveError(() => other.loadOtkeModel(vectorsModel()), 'backend', 'disposed');
  });

  it('throws backend once disposed, and dispose is idempotent', () => {
    const m = ind.loadOtkeModel(vectorsModel());
    m.dispose();
    m.dispose();
    expect(m.disposed).toBe(true);
    expectInductiveError(() => m.embedSets(x, shape, lengths), 'backend', 'disposed');
    expectInductiveError(() => m.toBytes(), 'backend', 'disposed');
  });
});

describe('sequences the default model cannot read', () => {
  let model: OtkeModel;
  const good = referenceSequences()[0]!;
  beforeAll(() => {
    model = ind.loadOtkeModel(modelBytes());
  });
  afterAll(() => model.dispose());

  it('invalid letters: the sequence, the position and the letter are named', () => {
    const bad = `${good.slice(0, 11)}N${good.slice(12)}`;
    expectInductiveError(
      () => model.embedSequences([good, bad]),
      'invalid_argument',
      "sequence '1'",
      "invalid letter 'N' at position 12",
      'ACGT',
    );
    expectInductiveError(() => model.predict([good, good, bad], { batchSize: 1 }), 'invalid_argument', "sequence '2'");
    expectInductiveError(
      () => model.transportPlans([bad], { names: ['my-seq'] }),
      'invalid_argument',
      "sequence 'my-seq'",
    );
    expectInductiveError(() => model.embedSequences([`${good.slice(0, 20)}é`]), 'invalid_argument', 'byte 0xc3');
    expectInductiveError(
      () => model.embedSequences([`${good.slice(0, 20)} ${good.slice(20)}`]),
      'invalid_argument',
      "invalid letter ' ' at position 21",
    );
  });

  it('sequences shorter than k', () => {
    const k = model.config.input.type === 'sequence' ? model.config.input.k : 0;
    expectInductiveError(
      () => model.predict([good, good.slice(0, k - 1)]),
      'invalid_argument',
      "sequence '1' is shorter than k",
      `got length ${k - 1}`,
      `expected >= ${k}`,
    );
    expect(model.embedSequences([good.slice(0, k)]).embeddings.every(Number.isFinite)).toBe(true);
  });

  it('empty input, non-strings, bad options', () => {
    expectInductiveError(() => model.embedSequences([]), 'invalid_argument', 'no sequence given');
    expectInductiveError(() => model.predict(['']), 'invalid_argument', 'empty sequence');
    expectInductiveError(
      () => model.embedSequences('ACGT' as unknown as string[]),
      'invalid_argument',
      'array of strings',
    );
    expectInductiveError(
      () => model.embedSequences([good, 5 as unknown as string]),
      'invalid_argument',
      'sequence 1 must be a string',
    );
    expectInductiveError(() => model.embedSequences([good], { names: ['a', 'b'] }), 'shape_mismatch', '2 names for 1');
    expectInductiveError(() => model.embedSequences([good], { batchSize: 0 }), 'invalid_argument', 'batchSize');
    expectInductiveError(() => model.fitHead([good, good], ['promoter']), 'shape_mismatch', '2 sequences for 1 labels');
    expectInductiveError(
      () => model.fitHead([good, 'ACGTX'], ['promoter', 'non-promoter']),
      'invalid_argument',
      "sequence '1'",
    );
  });

  it('an embedding-only model cannot predict; sets of the wrong dimension', () => {
    const bare = ind.loadOtkeModel(
      editModel(
        modelBytes(),
        (c) => {
          c.head = { classes: 0, labels: [] };
        },
        ['head.weight', 'head.bias'],
      ),
    );
    try {
      expectInductiveError(() => bare.predict([good]), 'invalid_argument', 'no classifier head');
      expect(bare.embedSequences([good]).embeddings).toEqual(model.embedSequences([good]).embeddings);
    } finally {
      bare.dispose();
    }
    expectInductiveError(
      () => model.embedSets(new Float32Array(6), { batch: 1, nMax: 2, dim: 3 }, new Int32Array([2])),
      'shape_mismatch',
      `expected ${model.featureDim}`,
    );
  });

  it('transport plans need otk pooling', () => {
    const mean = ind.loadOtkeModel(
      editModel(
        modelBytes(),
        (c) => {
          c.pooling = { type: 'mean' };
          c.head = { classes: 0, labels: [] };
        },
        ['otk.references', 'head.weight', 'head.bias'],
      ),
    );
    try {
      expectInductiveError(() => mean.transportPlans([good]), 'invalid_argument', "pools with 'mean'");
      expect(mean.embedSequences([good]).dim).toBe(mean.embedDim);
    } finally {
      mean.dispose();
    }
  });

  it('stays usable after all of these', () => {
    expect(model.predict([good]).batch).toBe(1);
    expect(ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2).converged).toBe(true);
  });
});
