// OTKE models in JS: load a model file, embed sequences or sets of vectors, look at the transport plans, predict
// with the model's head, fit a new head on a few labelled samples, and save the result. The maths is the core's
// (core/include/inductive/otke.h, thesis ch. 2); this file only moves arrays and names in and out of wasm memory.
//
//   const model = ind.loadOtkeModel(bytes);
//   const { probabilities, labels } = model.predict(['TTGACA...']);
//   const tuned = model.fitHead(sequences, ['promoter', 'other', ...]);   // a new model; `model` is unchanged
//   await writeFile('tuned.safetensors', tuned.toBytes());
//   tuned.dispose(); model.dispose();
import type { InductiveModule, OtkeHandle } from '../wasm/inductive.mjs';
import { checkArray, checkBoolean, checkCount, checkInt, checkNumber, checkOptionsObject, typeName } from './checks.js';
import { optionDefaults } from './defaults.js';
import { InductiveError, lastError, parseJson } from './errors.js';
import { adoptHandle, WasmObject } from './wasm-object.js';
import { modelFileBytes, withBlock, type Slot } from './heap.js';
import { resolveLabels } from './labels.js';
import { checkProgress, reportProgress, safeProgress, type ProgressCallback } from './progress.js';
import { checkNames, checkSequences, pack } from './strings.js';

export type { ProgressCallback } from './progress.js';

/** The model's configuration, as stored in its file (core: OtkeConfig::to_json). */
export interface OtkeConfig {
  input:
    | { type: 'sequence'; alphabet: string; k: number }
    | { type: 'vectors'; dim: number }
    | { type: 'tokens'; vocab: number; dim: number; lowercase: boolean; tokens: string[] };
  embedding:
    | { type: 'nystrom'; anchors: number; sigma: number; reg: number; keep_norm: boolean }
    | { type: 'conv'; filters: number }
    | { type: 'identity' };
  pooling:
    | {
        type: 'otk';
        p: number;
        q: number;
        eps: number;
        iters: number;
        sigma_pos: number;
        scale: 'paper' | 'otk-compatible';
        /** Ablations, present only when set: the attention plan and the sinusoidal encoding. */
        plan?: 'sinkhorn' | 'attention';
        sinusoidal?: boolean;
      }
    | { type: 'mean' }
    | { type: 'max' };
  head: {
    classes: number;
    labels: string[];
    /**
     * The thesis' DeepSEA-style head, present only when set (models trained by the native `otke train`): an MLP with
     * this many hidden ReLU units, its training dropout, and multilabel outputs (an independent sigmoid per label).
     */
    hidden?: number;
    dropout?: number;
    multilabel?: boolean;
  };
}

export interface EmbedOptions {
  /** Names of the sequences, used in error messages instead of their index ("sequence 'aldAp': ..."). */
  names?: string[];
  /** Sequences embedded per wasm call (bounds wasm memory; progress is reported after each). Default 256. */
  batchSize?: number;
  /** Stage "embed". */
  onProgress?: ProgressCallback;
}

/** Embeddings Phi(x): `embeddings[b * dim + c]`, dim = q p K (otk pooling) or K (mean/max). */
export interface OtkeEmbeddings {
  batch: number;
  dim: number;
  embeddings: Float32Array;
}

/** The shape of a padded batch of vector sets: x[(b * nMax + i) * dim + c] for i < lengths[b]. */
export interface SetShape {
  batch: number;
  nMax: number;
  dim: number;
}

/**
 * Transport plans of sequences onto the model's references (otk pooling), as pooled: after the positional
 * weighting when the model has one (`positionWeighted`), so their rows sum to 1/n and columns to 1/p only without it.
 * A model with the attention plan (config pooling.plan 'attention') gives its attention weights: columns sum to 1/p,
 * rows are free.
 * `plans[r][(b * nMax + i) * p + j]` is the mass that k-mer i of sequence b (its letters i .. i + k - 1, 0-based)
 * sends to support j of reference r; rows i >= lengths[b] are 0.
 */
export interface OtkeTransportPlans extends OtkeEmbeddings {
  /** References (q) and supports per reference (p). */
  q: number;
  p: number;
  /** Rows per sequence in `plans`: the most k-mers of any sequence. */
  nMax: number;
  /** k-mer length: row i covers sequence positions i .. i + k - 1. */
  k: number;
  /** k-mers per sequence, n = L - k + 1 (its plan's rows). */
  lengths: Int32Array;
  /** Letters per sequence, L. */
  sequenceLengths: Int32Array;
  /** One [batch, nMax, p] array per reference. */
  plans: Float32Array[];
  /** The model weights plans by position (pooling.sigma_pos > 0). */
  positionWeighted: boolean;
}

/** The head's output for a batch. */
export interface OtkePrediction {
  batch: number;
  classes: number;
  /** [batch, classes] */
  logits: Float32Array;
  /**
   * [batch, classes], softmax of the logits; for a multilabel model an independent sigmoid per label (rows do not
   * sum to 1).
   */
  probabilities: Float32Array;
  /** [batch]: the most probable class (multilabel: label) of each sample. */
  classIndex: Int32Array;
  /** The name of that class for each sample. */
  labels: string[];
  /** Whether the head is multilabel (OtkeModel.multilabel). */
  multilabel: boolean;
  /**
   * Per sample, the labels predicted present: those of probability > 0.5 (multilabel; possibly none), or the one
   * most probable class.
   */
  labelSets: string[][];
}

export interface FitHeadOptions extends EmbedOptions {
  /**
   * Class names in head order. Default: the model's labels when every given label is one of them, else the
   * distinct labels in order of first appearance (string labels), or "0".."C-1" (numeric labels).
   */
  classes?: string[];
  /** > 0: use this L2 penalty (on standardised embeddings). Default: chosen, see README "Fitting a head". */
  lambda?: number;
  /**
   * Fewest labels in every class for choosing lambda by cross-validation; below it the default. Default 10. Every
   * default here is the core's, listed in `ind.defaults.headFit`.
   */
  minPerClass?: number;
  /** Most cross-validation folds. Default 5. */
  maxFolds?: number;
  /** L-BFGS iterations (default 500) and gradient tolerance (default 1e-6). */
  maxIter?: number;
  tol?: number;
  /**
   * The thesis' protocol instead of cross-validation (as `inductive otke fit` runs it): these samples (indices into
   * the input) choose lambda; the head is fitted on the others for every lambda of the grid and the one with the
   * best holdout accuracy is kept as it is, or refitted on every sample with `refit`.
   */
  holdout?: readonly number[] | Int32Array;
  /**
   * Without `holdout`: > 0 draws the holdout as `inductive otke fit --val-fraction F --seed S` does (this share of
   * each class, stratified, seeded by `seed`), so the same labels give the CLI's head. Default 0 (cross-validation).
   */
  holdoutFraction?: number;
  seed?: number;
  refit?: boolean;
  /**
   * The lambdas to choose from. Default: 2^1 .. 2^-20 for cross-validation, the thesis' 2^-5 .. 2^-20 with a holdout
   * (`ind.defaults.headFit.lambdaGrid` and `.holdoutLambdaGrid`; the grids `otke fit` uses).
   */
  lambdaGrid?: readonly number[];
  /** Stages "embed" (sequences only), "cross-validation" (when lambda is chosen so), "fit". */
  onProgress?: ProgressCallback;
}

/** How a head was fitted (OtkeModel.headFit). Accuracies are fractions in [0, 1]. */
export interface HeadFitReport {
  lambda: number;
  lambdaChoice: 'given' | 'cross-validation' | 'default' | 'holdout';
  /**
   * Cross-validation only: the folds, the chosen lambda's accuracy and mean cross-entropy on held-out samples, and
   * [lambda, accuracy, cross-entropy] for every lambda of the grid (strongest first).
   */
  folds?: number;
  cvAccuracy?: number;
  cvLoss?: number;
  /** Cross-validation: [lambda, accuracy, cross-entropy]; holdout: [lambda, holdout accuracy]. */
  lambdaPath?: [number, number, number][] | [number, number][];
  /** Holdout only: the kept head's accuracy on the holdout samples (before any refit). */
  holdoutAccuracy?: number;
  trainAccuracy: number;
  trainLoss: number;
  iterations: number;
  /** Labelled samples per class. */
  classCounts: number[];
}

interface Description {
  config: OtkeConfig;
  featureDim: number;
  embedDim: number;
  outputDim: number;
  formatVersion: number;
  producer: string;
}

/** An OTKE model living in wasm memory. dispose() it (or `using`) when done; every method is synchronous. */
export class OtkeModel extends WasmObject<OtkeHandle> {
  readonly #module: InductiveModule;
  /** The model's configuration, as in its file. */
  readonly config: OtkeConfig;
  /** Class names of the head, one per class ([] without a head; "0", "1", ... when the file names none). */
  readonly labels: string[];
  /** Dimension of the local features (k |alphabet| for sequences, input.dim for sets). */
  readonly featureDim: number;
  /** Dimension of the embedding of one element (K). */
  readonly embedDim: number;
  /** Dimension of a sample's embedding Phi (q p K for otk pooling, K for mean/max). */
  readonly outputDim: number;
  /** Format version and producer of the file it was loaded from ("inductive 0.1.0 native"); this build's for fitted models. */
  readonly formatVersion: number;
  readonly producer: string;
  /** How this model's head was fitted, when it comes from fitHead(); null for a loaded model. */
  readonly headFit: HeadFitReport | null;

  /** @internal Use `ind.loadOtkeModel(bytes)`. */
  constructor(module: InductiveModule, handle: OtkeHandle, headFit: HeadFitReport | null) {
    super(handle, 'OtkeModel');
    this.#module = module;
    const d = parseJson<Description>(handle.describe(), 'loadOtkeModel');
    this.config = d.config;
    const classes = d.config.head.classes;
    this.labels =
      classes === 0
        ? []
        : d.config.head.labels.length === classes
          ? d.config.head.labels.slice()
          : Array.from({ length: classes }, (_, c) => String(c));
    this.featureDim = d.featureDim;
    this.embedDim = d.embedDim;
    this.outputDim = d.outputDim;
    this.formatVersion = d.formatVersion;
    this.producer = d.producer;
    this.headFit = headFit;
  }

  /** Whether the head predicts independent labels (a sigmoid each) rather than one class of C. */
  get multilabel(): boolean {
    return this.config.head.multilabel === true;
  }

  /** Classes of the head (0: an embedding-only model, which cannot predict until a head is fitted). */
  get classes(): number {
    return this.labels.length;
  }

  /** Embeddings of sequences (letters of the model's alphabet, case-insensitive; each at least k long). */
  embedSequences(sequences: string[], options?: EmbedOptions): OtkeEmbeddings {
    const r = this.#runSequences('embedSequences', sequences, options, { embeddings: true });
    return { batch: r.batch, dim: this.outputDim, embeddings: r.embeddings };
  }

  /**
   * Embeddings of a padded batch of vector sets: x[(b * nMax + i) * dim + c] for i < lengths[b] (padding is never
   * read). A sequence model takes the sets of its local features (one-hot k-mers, dim = featureDim).
   */
  embedSets(x: Float32Array, shape: SetShape, lengths: Int32Array): OtkeEmbeddings {
    const r = this.#runSets('embedSets', x, shape, lengths, false);
    return { batch: r.batch, dim: this.outputDim, embeddings: r.embeddings };
  }

  /** The transport plans of sequences onto every reference, with their embeddings (otk pooling only). */
  transportPlans(sequences: string[], options?: EmbedOptions): OtkeTransportPlans {
    const where = 'transportPlans';
    const pooling = this.config.pooling;
    if (pooling.type !== 'otk') {
      throw new InductiveError(
        'invalid_argument',
        `${where}: this model pools with '${pooling.type}'; transport plans exist for otk pooling only`,
      );
    }
    if (this.config.input.type === 'tokens') {
      // Plan rows are tokens, not letters; this API reports positions in letters (k-mers).
      throw new InductiveError(
        'invalid_argument',
        `${where}: not available for text (tokens) models in this version; use embedSequences or predict`,
      );
    }
    const r = this.#runSequences(where, sequences, options, { embeddings: true, plans: true });
    return {
      batch: r.batch,
      dim: this.outputDim,
      embeddings: r.embeddings,
      q: pooling.q,
      p: pooling.p,
      nMax: r.nMax,
      k: this.#kmer(),
      lengths: r.lengths,
      sequenceLengths: r.sequenceLengths,
      plans: r.plans,
      positionWeighted: pooling.sigma_pos > 0,
    };
  }

  /** The head's class probabilities for sequences. Throws invalid_argument when the model has no head. */
  predict(sequences: string[], options?: EmbedOptions): OtkePrediction {
    const r = this.#runSequences('predict', sequences, options, { predictions: true });
    return this.#prediction(r.batch, r.logits, r.probabilities);
  }

  /** The head's class probabilities for a padded batch of vector sets (as embedSets). */
  predictSets(x: Float32Array, shape: SetShape, lengths: Int32Array): OtkePrediction {
    const r = this.#runSets('predictSets', x, shape, lengths, true);
    return this.#prediction(r.batch, r.logits, r.probabilities);
  }

  /** The head applied to embeddings [batch, outputDim] (e.g. from embedSequences). */
  predictEmbeddings(embeddings: Float32Array): OtkePrediction {
    const where = 'predictEmbeddings';
    const module = this.#module;
    return this.use(where, (handle) => {
      const batch = this.#embeddingRows(where, embeddings);
      const C = this.classes;
      const slots: Slot[] = [
        { type: 'f32', length: embeddings.length },
        { type: 'f32', length: batch * C },
        { type: 'f32', length: batch * C },
      ];
      const [logits, probabilities] = withBlock(module, slots, where, (block) => {
        block.write(0, embeddings);
        const at = block.addresses;
        const ok = handle.predict({
          x: at[0] ?? 0,
          batch,
          dim: this.outputDim,
          logits: at[1] ?? 0,
          probabilities: at[2] ?? 0,
        });
        if (!ok) throw lastError(module);
        return [block.readF32(1), block.readF32(2)] as const;
      });
      return this.#prediction(batch, logits, probabilities);
    });
  }

  /**
   * A new model: this one with a new linear head (multinomial logistic regression, L2 penalty) fitted on labelled
   * samples, given as sequences or as their embeddings [labels.length, outputDim]. This model is left unchanged;
   * dispose of both when done. The L2 penalty is chosen as README "Fitting a head" explains; the report is in
   * the new model's `headFit`.
   */
  fitHead(
    input: string[] | Float32Array,
    labels: readonly string[] | readonly number[] | Int32Array,
    options?: FitHeadOptions,
  ): OtkeModel {
    const where = 'fitHead';
    checkOptionsObject(where, options);
    const module = this.#module;
    return this.use(where, (handle) => {
      const { y, names } = resolveLabels(where, labels, options?.classes, this.labels);
      let embeddings: Float32Array;
      if (input instanceof Float32Array) {
        embeddings = input;
        const rows = this.#embeddingRows(where, input);
        if (rows !== y.length) {
          throw new InductiveError(
            'shape_mismatch',
            `${where}: ${rows} embeddings for ${y.length} labels; expected one label per sample`,
          );
        }
      } else {
        const seqs = checkSequences(where, input);
        if (seqs.length !== y.length) {
          throw new InductiveError(
            'shape_mismatch',
            `${where}: ${seqs.length} sequences for ${y.length} labels; expected one label per sequence`,
          );
        }
        embeddings = this.#runSequences(where, seqs, options, { embeddings: true }).embeddings;
      }
      const d = optionDefaults(module).headFit;
      const call = {
        classes: names.length,
        labelNames: JSON.stringify(names),
        lambda: checkNumber(where, 'lambda', options?.lambda, d.lambda),
        minPerClass: checkInt(where, 'minPerClass', options?.minPerClass, d.minPerClass),
        maxFolds: checkInt(where, 'maxFolds', options?.maxFolds, d.maxFolds),
        maxIter: checkInt(where, 'maxIter', options?.maxIter, d.maxIter),
        tol: checkNumber(where, 'tol', options?.tol, d.tol),
        holdout: JSON.stringify(integers(where, 'holdout', options?.holdout)),
        holdoutFraction: checkNumber(where, 'holdoutFraction', options?.holdoutFraction, d.holdoutFraction),
        seed: checkNumber(where, 'seed', options?.seed, d.seed),
        refit: checkBoolean(where, 'refit', options?.refit, d.refit),
        lambdaGrid: JSON.stringify(finiteNumbers(where, 'lambdaGrid', options?.lambdaGrid)),
      };
      const progress = safeProgress(where, options?.onProgress);
      const batch = y.length;
      return adoptHandle(new module.OtkeHandle(), (out) => {
        const report = withBlock(
          module,
          [
            { type: 'f32', length: embeddings.length },
            { type: 'i32', length: batch },
          ],
          where,
          (block) => {
            block.write(0, embeddings);
            block.write(1, y);
            const text = handle.fitHead(
              { ...call, x: block.addresses[0] ?? 0, labels: block.addresses[1] ?? 0, batch, dim: this.outputDim },
              out,
              progress.callback,
            );
            progress.rethrow();
            if (text === '') throw lastError(module);
            return parseJson<HeadFitReport>(text, where);
          },
        );
        return new OtkeModel(module, out, report);
      });
    });
  }

  /** The model file (.safetensors bytes), with the current head: what `loadOtkeModel` reads back. */
  toBytes(): Uint8Array {
    return modelFileBytes(this.#module, this.live('toBytes'));
  }

  #kmer(): number {
    return this.config.input.type === 'sequence' ? this.config.input.k : 1;
  }

  #embeddingRows(where: string, x: unknown): number {
    if (!(x instanceof Float32Array)) {
      throw new InductiveError('invalid_argument', `${where}: embeddings must be a Float32Array: got ${typeName(x)}`);
    }
    const D = this.outputDim;
    if (x.length % D !== 0) {
      throw new InductiveError(
        'shape_mismatch',
        `${where}: embeddings have ${x.length} values, not a multiple of the model's output dimension ${D}`,
      );
    }
    return x.length / D;
  }

  #prediction(batch: number, logits: Float32Array, probabilities: Float32Array): OtkePrediction {
    const C = this.classes;
    const classIndex = new Int32Array(batch);
    for (let b = 0; b < batch; ++b) {
      let best = 0;
      for (let c = 1; c < C; ++c) if ((probabilities[b * C + c] ?? 0) > (probabilities[b * C + best] ?? 0)) best = c;
      classIndex[b] = best;
    }
    const name = (c: number): string => this.labels[c] ?? String(c);
    const multilabel = this.multilabel;
    const labelSets = Array.from({ length: batch }, (_, b) =>
      multilabel ? this.labels.filter((_, c) => (probabilities[b * C + c] ?? 0) > 0.5) : [name(classIndex[b] ?? 0)],
    );
    return {
      batch,
      classes: C,
      logits,
      probabilities,
      classIndex,
      multilabel,
      labelSets,
      labels: Array.from(classIndex, (c) => name(c)),
    };
  }

  // Sequences go through the core in chunks of batchSize: features, element embeddings and Sinkhorn buffers stay
  // O(batchSize) in wasm memory whatever the number of sequences, and progress is reported between chunks.
  #runSequences(
    where: string,
    sequences: unknown,
    options: EmbedOptions | undefined,
    want: { embeddings?: boolean; plans?: boolean; predictions?: boolean },
  ): RunResult {
    checkOptionsObject(where, options);
    const module = this.#module;
    return this.use(where, (handle) => {
      const seqs = checkSequences(where, sequences);
      const names = options?.names === undefined ? undefined : checkNames(where, options.names, seqs.length);
      const chunk = checkCount(where, 'batchSize', options?.batchSize ?? optionDefaults(module).batchSize);
      if (chunk === 0) throw new InductiveError('invalid_argument', `${where}: batchSize must be >= 1: got 0`);
      const onProgress = checkProgress(where, options?.onProgress);
      const encoder = new TextEncoder();
      const encoded = seqs.map((s) => encoder.encode(s));
      // Names by index when none are given, so that messages name the right sequence whatever chunk it is in.
      const labelsForErrors = (names ?? seqs.map((_, i) => String(i))).map((s) => encoder.encode(s));
      const B = seqs.length;
      const k = this.#kmer();
      const sequenceLengths = Int32Array.from(encoded, (e) => e.length);
      const lengths = Int32Array.from(sequenceLengths, (L) => Math.max(0, L - k + 1));
      const nMax = lengths.reduce((m, n) => Math.max(m, n), 0);
      const D = this.outputDim;
      const C = want.predictions ? this.classes : 0;
      const pooling = this.config.pooling;
      const q = want.plans && pooling.type === 'otk' ? pooling.q : 0;
      const p = want.plans && pooling.type === 'otk' ? pooling.p : 0;

      const result: RunResult = {
        batch: B,
        nMax,
        lengths,
        sequenceLengths,
        embeddings: new Float32Array(want.embeddings ? B * D : 0),
        plans: Array.from({ length: q }, () => new Float32Array(B * nMax * p)),
        logits: new Float32Array(B * C),
        probabilities: new Float32Array(B * C),
      };
      reportProgress(where, onProgress, 'embed', 0);
      // One call even for no sequence at all: the core names that error.
      for (let start = 0; start < B || start === 0; start += chunk) {
        const end = Math.min(B, start + chunk);
        const n = end - start;
        const [bytes, offsets] = pack(encoded, start, end);
        const [nameBytes, nameOffsets] = pack(labelsForErrors, start, end);
        const slots: Slot[] = [
          { type: 'u8', length: bytes.length },
          { type: 'i32', length: offsets.length },
          { type: 'u8', length: nameBytes.length },
          { type: 'i32', length: nameOffsets.length },
          { type: 'f32', length: want.embeddings ? n * D : 0 },
          { type: 'f32', length: q * n * nMax * p },
          { type: 'f32', length: n * C },
          { type: 'f32', length: n * C },
        ];
        withBlock(module, slots, where, (block) => {
          block.write(0, bytes);
          block.write(1, offsets);
          block.write(2, nameBytes);
          block.write(3, nameOffsets);
          const at = (i: number): number => block.addresses[i] ?? 0;
          const ok = handle.embed({
            batch: n,
            sequences: true,
            bytes: at(0),
            offsets: at(1),
            nameBytes: at(2),
            nameOffsets: at(3),
            x: 0,
            lengths: 0,
            nMax: 0,
            dim: 0,
            embeddings: at(4),
            plans: at(5),
            planStride: nMax,
            predict: want.predictions === true,
            logits: at(6),
            probabilities: at(7),
          });
          if (!ok) throw lastError(module);
          if (want.embeddings) result.embeddings.set(block.readF32(4), start * D);
          if (q > 0) {
            const plans = block.readF32(5);
            for (let r = 0; r < q; ++r) {
              result.plans[r]?.set(plans.subarray(r * n * nMax * p, (r + 1) * n * nMax * p), start * nMax * p);
            }
          }
          if (C > 0) {
            result.logits.set(block.readF32(6), start * C);
            result.probabilities.set(block.readF32(7), start * C);
          }
        });
        reportProgress(where, onProgress, 'embed', B === 0 ? 1 : end / B);
        if (end >= B) break;
      }
      return result;
    });
  }

  #runSets(where: string, x: unknown, shape: SetShape, lengths: unknown, predictions: boolean): RunResult {
    const module = this.#module;
    return this.use(where, (handle) => {
      if (shape === null || typeof shape !== 'object') {
        throw new InductiveError(
          'invalid_argument',
          `${where}: shape must be an object { batch, nMax, dim }: got ${typeName(shape)}`,
        );
      }
      const batch = checkCount(where, 'batch', shape.batch);
      const nMax = checkCount(where, 'nMax', shape.nMax);
      const dim = checkCount(where, 'dim', shape.dim);
      const data = checkArray(
        where,
        'x',
        x,
        Float32Array,
        batch * nMax * dim,
        `batch x nMax x dim = ${batch} x ${nMax} x ${dim}`,
      );
      const n = checkArray(where, 'lengths', lengths, Int32Array, batch, 'batch');
      const D = this.outputDim;
      const C = predictions ? this.classes : 0;
      const slots: Slot[] = [
        { type: 'f32', length: data.length },
        { type: 'i32', length: batch },
        { type: 'f32', length: predictions ? 0 : batch * D },
        { type: 'f32', length: batch * C },
        { type: 'f32', length: batch * C },
      ];
      return withBlock(module, slots, where, (block) => {
        block.write(0, data);
        block.write(1, n);
        const at = (i: number): number => block.addresses[i] ?? 0;
        const ok = handle.embed({
          batch,
          sequences: false,
          bytes: 0,
          offsets: 0,
          nameBytes: 0,
          nameOffsets: 0,
          x: at(0),
          lengths: at(1),
          nMax,
          dim,
          embeddings: at(2),
          plans: 0,
          planStride: 0,
          predict: predictions,
          logits: at(3),
          probabilities: at(4),
        });
        if (!ok) throw lastError(module);
        return {
          batch,
          nMax,
          lengths: n.slice(),
          sequenceLengths: new Int32Array(0),
          plans: [],
          embeddings: block.readF32(2),
          logits: block.readF32(3),
          probabilities: block.readF32(4),
        };
      });
    });
  }
}

interface RunResult {
  batch: number;
  nMax: number;
  lengths: Int32Array;
  sequenceLengths: Int32Array;
  embeddings: Float32Array;
  plans: Float32Array[];
  logits: Float32Array;
  probabilities: Float32Array;
}

/** Reads a model file into a new OtkeModel; the core's reader validates it (kind "otke", version, tensors). */
export function loadOtkeModel(module: InductiveModule, bytes: unknown): OtkeModel {
  const where = 'loadOtkeModel';
  if (!(bytes instanceof Uint8Array)) {
    throw new InductiveError('invalid_argument', `${where}: bytes must be a Uint8Array: got ${typeName(bytes)}`);
  }
  const data = bytes;
  return adoptHandle(new module.OtkeHandle(), (handle) => {
    // A malloc'd copy is 8-byte aligned, which the reader relies on; the model copies its tensors out of it.
    withBlock(module, [{ type: 'u8', length: data.length }], where, (block) => {
      block.write(0, data);
      if (!handle.load(block.addresses[0] ?? 0, data.length)) throw lastError(module);
    });
    return new OtkeModel(module, handle, null);
  });
}

/** A list option of integers (sample indices): [] when absent; range and duplicates are the core's to check. */
function integers(where: string, name: string, x: unknown): number[] {
  if (x === undefined) return [];
  const list = x instanceof Int32Array ? Array.from(x) : x;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'number' || !Number.isInteger(v))) {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be an array of integers: got ${typeName(x)}`);
  }
  return list as number[];
}

/** A list option of finite numbers: [] when absent (JSON has no NaN: refuse it here, by name). */
function finiteNumbers(where: string, name: string, x: unknown): number[] {
  if (x === undefined) return [];
  if (!Array.isArray(x) || x.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be an array of finite numbers`);
  }
  return x as number[];
}
