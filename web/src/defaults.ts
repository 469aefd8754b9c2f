// The defaults of the options this package takes: the core's own (the same values the CLI's flags default to),
// read once per module from optionDefaults() instead of being restated here, so the browser cannot drift from
// the CLI. A left-out option takes the value below.
import type { InductiveModule } from '../wasm/inductive.mjs';
import type { CompressionRanking, KernelOptions, ScreeningLoss, ScreeningPenalty } from './screening.js';

export interface OptionDefaults {
  sinkhorn: { eps: number; maxIter: number; tol: number; similarity: boolean };
  /** Samples (sequences, molecules) per wasm call in embed / predict: `otke embed --batch-size`'s default. */
  batchSize: number;
  headFit: {
    lambda: number;
    minPerClass: number;
    maxFolds: number;
    maxIter: number;
    tol: number;
    refit: boolean;
    holdoutFraction: number;
    seed: number;
    /** The grid of cross-validation (2^1 .. 2^-20) and of the thesis' holdout protocol (2^-5 .. 2^-20). */
    lambdaGrid: number[];
    holdoutLambdaGrid: number[];
  };
  otkeFit: {
    seed: number;
    kmeansIters: number;
    maxSamples: number;
    referenceUpdate: 'kmeans' | 'barycenter';
    barycenterIters: number;
    barycenterEps: number;
  };
  screen: {
    loss: ScreeningLoss;
    mu: number;
    penalty: ScreeningPenalty;
    l1Ratio: number;
    lambda: number;
    intercept: boolean;
    tol: number;
    maxEpochs: number;
    gapEvery: number;
    dynamic: boolean;
    ellipsoidSteps: number;
    kernel: Required<KernelOptions>;
  };
  csv: { header: boolean; labelColumn: number; delimiter: string };
  path: { lambdaMax: number; ratio: number; count: number };
  compression: { testFraction: number; seed: number; fractions: number[]; rankings: CompressionRanking[] };
}

const cache = new WeakMap<InductiveModule, OptionDefaults>();

/** The core's option defaults (frozen; one parse per module). */
export function optionDefaults(module: InductiveModule): OptionDefaults {
  let d = cache.get(module);
  if (d === undefined) {
    d = deepFreeze(JSON.parse(module.optionDefaults()) as OptionDefaults);
    cache.set(module, d);
  }
  return d;
}

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}
