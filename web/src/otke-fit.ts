// Learning an OTKE model in the browser from the user's own data: the unsupervised stage of the thesis (Nyström
// anchors by spherical k-means++ on sampled k-mers, references by k-means on their embeddings, or 2-Wasserstein
// k-means for q > 1), as the native `inductive otke fit` runs it (core fit_otke_unsupervised). The result has no
// head: fit one from a few labels with `model.fitHead(...)`, and save it with `toBytes()` (the CLI reads it).
//
//   const base = ind.fitOtke(sequences, { k: 8, anchors: 32, p: 16, onProgress });
//   const model = base.fitHead(labelledSequences, labels);   base.dispose();
import type { InductiveModule, OtkeEmbedCall } from '../wasm/inductive.mjs';
import {
  checkArray,
  checkBoolean,
  checkCount,
  checkInt,
  checkNumber,
  checkOptionsObject,
  checkString,
  typeName,
} from './checks.js';
import { optionDefaults } from './defaults.js';
import { InductiveError, lastError } from './errors.js';
import { withBlock, type Slot } from './heap.js';
import { OtkeModel } from './otke.js';
import { safeProgress, type ProgressCallback } from './progress.js';
import { adoptHandle } from './wasm-object.js';
import { checkSequences, pack } from './strings.js';

/**
 * The model to learn. Every field is optional; what is left out takes the core's default (the same as a model
 * file that leaves it out): DNA, k 10, 128 Nyström anchors (sigma 0.6), otk pooling with p 64 supports, q 1
 * reference, eps 0.5, 10 Sinkhorn iterations, no positional weighting.
 */
export interface OtkeFitOptions {
  /** Sequences: 'dna' (default), 'protein', or the letters themselves. */
  alphabet?: string;
  /** Sequences: k-mer length. */
  k?: number;
  /** Nyström anchors K (the embedding dimension) and the kernel's bandwidth. */
  anchors?: number;
  sigma?: number;
  /** 'otk' (optimal transport onto learned references), or the thesis' baselines 'mean' and 'max'. */
  pooling?: 'otk' | 'mean' | 'max';
  /** otk pooling: supports per reference, references, entropic eps, Sinkhorn iterations, positional sigma. */
  p?: number;
  q?: number;
  eps?: number;
  iters?: number;
  sigmaPos?: number;
  /**
   * The thesis' ablations (stored in the model): 'attention' replaces the transport plan by each support's softmax
   * over the elements ("dot-product instead of OT"); `sinusoidal` adds Vaswani et al.'s positional encoding (unit
   * norm) to the embedded elements, the alternative to `sigmaPos`.
   */
  plan?: 'sinkhorn' | 'attention';
  sinusoidal?: boolean;
  /**
   * How references are learnt: 'kmeans' (default), or 'barycenter': refined from the k-means start into the
   * free-support Wasserstein barycenter of the sets (`barycenterIters` fixed-point steps, default 10; Sinkhorn
   * regularisation `barycenterEps`, relative to each plan's mean squared distance, default 0.05). Reads every set,
   * as q > 1 does. Every default here is the core's (`ind.defaults.otkeFit`), as `inductive otke fit` takes.
   */
  referenceUpdate?: 'kmeans' | 'barycenter';
  barycenterIters?: number;
  barycenterEps?: number;
  /** k-means iterations (default 100), local features sampled for k-means (default 300000), seed (default 0). */
  kmeansIters?: number;
  maxSamples?: number;
  seed?: number;
  /** Stages of the core's fit (anchors, references); return false to cancel (throws InductiveError 'cancelled'). */
  onProgress?: ProgressCallback;
}

/** Padded vector sets as training input: x[(b * nMax + i) * dim + c] for i < lengths[b]. */
export interface OtkeSets {
  x: Float32Array;
  shape: { batch: number; nMax: number; dim: number };
  lengths: Int32Array;
}

const KEYS = new Set([
  'alphabet',
  'k',
  'anchors',
  'sigma',
  'pooling',
  'p',
  'q',
  'eps',
  'iters',
  'sigmaPos',
  'plan',
  'sinusoidal',
  'referenceUpdate',
  'barycenterIters',
  'barycenterEps',
  'kmeansIters',
  'maxSamples',
  'seed',
  'onProgress',
]);

/** The model-file config for the options: only what the caller set (the core fills in its defaults). */
function configFor(where: string, o: OtkeFitOptions, input: Record<string, unknown>): Record<string, unknown> {
  const set = <T>(target: Record<string, unknown>, key: string, value: T | undefined): void => {
    if (value !== undefined) target[key] = value;
  };
  const embedding: Record<string, unknown> = {};
  set(embedding, 'anchors', o.anchors === undefined ? undefined : checkCount(where, 'anchors', o.anchors));
  set(embedding, 'sigma', o.sigma === undefined ? undefined : checkNumber(where, 'sigma', o.sigma, 0));
  const pooling: Record<string, unknown> = {};
  if (o.pooling !== undefined && typeof o.pooling !== 'string') {
    throw new InductiveError('invalid_argument', `${where}: pooling must be 'otk', 'mean' or 'max'`);
  }
  set(pooling, 'type', o.pooling);
  set(pooling, 'p', o.p === undefined ? undefined : checkCount(where, 'p', o.p));
  set(pooling, 'q', o.q === undefined ? undefined : checkCount(where, 'q', o.q));
  set(pooling, 'eps', o.eps === undefined ? undefined : checkNumber(where, 'eps', o.eps, 0));
  set(pooling, 'iters', o.iters === undefined ? undefined : checkCount(where, 'iters', o.iters));
  set(pooling, 'sigma_pos', o.sigmaPos === undefined ? undefined : checkNumber(where, 'sigmaPos', o.sigmaPos, 0));
  set(pooling, 'plan', o.plan === undefined ? undefined : checkString(where, 'plan', o.plan, 'sinkhorn'));
  set(
    pooling,
    'sinusoidal',
    o.sinusoidal === undefined ? undefined : checkBoolean(where, 'sinusoidal', o.sinusoidal, false),
  );
  return { input, embedding, pooling };
}

/** ind.fitOtke: a new OTKE model (without a head) learnt from sequences or vector sets, unsupervised. */
export function fitOtke(module: InductiveModule, data: unknown, options: OtkeFitOptions = {}): OtkeModel {
  const where = 'fitOtke';
  checkOptionsObject(where, options);
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw new InductiveError('invalid_argument', `${where}: unknown option '${key}'`);
  }
  const progress = safeProgress(where, options.onProgress);
  const d = optionDefaults(module).otkeFit;
  const fit = {
    seed: checkInt(where, 'seed', options.seed, d.seed),
    kmeansIters: checkInt(where, 'kmeansIters', options.kmeansIters, d.kmeansIters),
    maxSamples: checkInt(where, 'maxSamples', options.maxSamples, d.maxSamples),
    referenceUpdate: checkString(where, 'referenceUpdate', options.referenceUpdate, d.referenceUpdate),
    barycenterIters: checkInt(where, 'barycenterIters', options.barycenterIters, d.barycenterIters),
    barycenterEps: checkNumber(where, 'barycenterEps', options.barycenterEps, d.barycenterEps),
  };
  let slots: Slot[];
  let fill: (
    at: (i: number) => number,
    write: (i: number, a: Uint8Array | Int32Array | Float32Array) => void,
  ) => OtkeEmbedCall;
  let input: Record<string, unknown>;
  if (Array.isArray(data)) {
    const seqs = checkSequences(where, data);
    const encoder = new TextEncoder();
    const [bytes, offsets] = pack(
      seqs.map((s) => encoder.encode(s)),
      0,
      seqs.length,
    );
    input = { type: 'sequence' };
    if (options.alphabet !== undefined) {
      if (typeof options.alphabet !== 'string') {
        throw new InductiveError(
          'invalid_argument',
          `${where}: alphabet must be a string: got ${typeName(options.alphabet)}`,
        );
      }
      input.alphabet = options.alphabet;
    }
    if (options.k !== undefined) input.k = checkCount(where, 'k', options.k);
    slots = [
      { type: 'u8', length: bytes.length },
      { type: 'i32', length: offsets.length },
    ];
    fill = (at, write) => {
      write(0, bytes);
      write(1, offsets);
      return setsCall({ batch: seqs.length, sequences: true, bytes: at(0), offsets: at(1) });
    };
  } else if (data !== null && typeof data === 'object' && 'x' in data && 'shape' in data && 'lengths' in data) {
    const sets = data as OtkeSets;
    const batch = checkCount(where, 'batch', sets.shape?.batch);
    const nMax = checkCount(where, 'nMax', sets.shape?.nMax);
    const dim = checkCount(where, 'dim', sets.shape?.dim);
    const x = checkArray(
      where,
      'x',
      sets.x,
      Float32Array,
      batch * nMax * dim,
      `batch x nMax x dim = ${batch} x ${nMax} x ${dim}`,
    );
    const lengths = checkArray(where, 'lengths', sets.lengths, Int32Array, batch, 'batch');
    if (options.alphabet !== undefined || options.k !== undefined) {
      throw new InductiveError('invalid_argument', `${where}: alphabet and k are for sequences, not vector sets`);
    }
    input = { type: 'vectors', dim };
    slots = [
      { type: 'f32', length: x.length },
      { type: 'i32', length: batch },
    ];
    fill = (at, write) => {
      write(0, x);
      write(1, lengths);
      return setsCall({ batch, sequences: false, x: at(0), lengths: at(1), nMax, dim });
    };
  } else {
    throw new InductiveError(
      'invalid_argument',
      `${where}: data must be an array of sequences or vector sets { x, shape, lengths }: got ${typeName(data)}`,
    );
  }
  const config = JSON.stringify(configFor(where, options, input));
  return adoptHandle(new module.OtkeHandle(), (handle) => {
    withBlock(module, slots, where, (block) => {
      const call = fill(
        (i) => block.addresses[i] ?? 0,
        (i, a) => block.write(i, a),
      );
      const ok = handle.fitUnsupervised(call, { config, ...fit }, progress.callback);
      progress.rethrow();
      if (!ok) throw lastError(module);
    });
    return new OtkeModel(module, handle, null);
  });
}

function setsCall(c: Partial<OtkeEmbedCall>): OtkeEmbedCall {
  return {
    batch: 0,
    sequences: false,
    bytes: 0,
    offsets: 0,
    nameBytes: 0,
    nameOffsets: 0,
    x: 0,
    lengths: 0,
    nMax: 0,
    dim: 0,
    embeddings: 0,
    plans: 0,
    planStride: 0,
    predict: false,
    logits: 0,
    probabilities: 0,
    ...c,
  };
}
