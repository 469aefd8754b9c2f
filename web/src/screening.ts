// Safe sample screening in JS (thesis ch. 4; the maths in core/include/inductive/screening.h): load a dataset
// (LIBSVM or CSV text, gzip or not, or dense arrays), solve a regularised ERM problem to a certified duality gap
// with dynamic gap-safe screening, and learn which samples provably do not affect the optimum. The core does the
// work (the same solve_and_screen as `inductive screen`); this file moves arrays and options in and out.
//
//   const data = ind.loadDataset(bytes, { format: 'csv' });
//   const r = data.screen({ loss: 'squared_hinge', lambda: 1, positive: 9 });
//   r.fractionScreened; r.kept;   // samples that may matter; the others can be dropped without changing the fit
//   data.dispose();
import type { DatasetHandle, InductiveModule } from '../wasm/inductive.mjs';
import { checkArray, checkBoolean, checkCount, checkInt, checkNumber, checkOptionsObject, typeName } from './checks.js';
import { optionDefaults } from './defaults.js';
import { InductiveError, invalid, lastError, parseJson } from './errors.js';
import { withBlock } from './heap.js';
import { adoptHandle, WasmObject } from './wasm-object.js';
import {
  checkProgress,
  guardedCallback,
  safeProgress as safeCancellableProgress,
  type ProgressCallback,
} from './progress.js';

/** Losses with a flat region (screenable) and two without, for comparison (core: inductive/screening/loss.h). */
export type ScreeningLoss =
  'squared_hinge' | 'hinge' | 'safe_logistic' | 'logistic' | 'interval_regression' | 'squared';
export type ScreeningPenalty = 'l2' | 'l1' | 'elastic_net';

export interface LoadDatasetOptions {
  /** 'libsvm' (svmlight: `label index:value ...`, 1-based increasing indices) or 'csv' (one sample per line). */
  format: 'libsvm' | 'csv';
  /** CSV: skip the first line. Default false. */
  header?: boolean;
  /** CSV: the label column; negative counts from the end. Default -1 (the last). */
  labelColumn?: number;
  /** CSV: one character. Default ','. */
  delimiter?: string;
}

/** Reported after each duality-gap check of the solver. */
export interface ScreenProgress {
  epoch: number;
  primal: number;
  dual: number;
  gap: number;
  /** Samples still in the (reduced) problem. */
  active: number;
  /** 1 - active / n: the fraction removed so far by dynamic screening. */
  fractionScreened: number;
}

export interface ScreenOptions {
  /** Default 'squared_hinge'. Classification losses need two-valued labels (or `positive`). */
  loss?: ScreeningLoss;
  /** The flat-region parameter (thesis convention): classification losses are flat for margins t > 1 - mu,
   * interval regression for |t| < mu. Default 0. */
  mu?: number;
  /** Default 'l2'. */
  penalty?: ScreeningPenalty;
  /** Elastic net only: the L1 share in (0, 1). Default 0.5. */
  l1Ratio?: number;
  /** Regularisation lambda > 0 of `1/n sum_i loss(t_i) + lambda R(w)`, R(w) = ||w||^2 (no 1/2) or ||w||_1.
   * Default 0.1. */
  lambda?: number;
  /** Fit an intercept (LIBLINEAR style: one more, penalised, coordinate). Default false. */
  intercept?: boolean;
  /** Relative duality gap to stop at. Default 1e-6. */
  tol?: number;
  /** Epoch cap. Default 1000. */
  maxEpochs?: number;
  /** Epochs between gap checks (and dynamic screening tests). Default 1. */
  gapEvery?: number;
  /** Screen inside the solver as the gap closes. Default true. */
  dynamic?: boolean;
  /**
   * The static test at the solution: after the gap and l1 balls, this many steps of the ellipsoid method (thesis
   * ch. 4) from the smaller ball; every iterate holds the optimum, so more steps never screen fewer samples. Each
   * region is tested in closed form. Default 0 (balls only). In `path`, it shapes `staticScreen`. With a pure L1
   * penalty and a smooth loss the balls and the steps run in the support certified by the dual ball, where a few
   * thousand steps screen samples (L1 has no gap ball).
   */
  ellipsoidSteps?: number;
  /** One-vs-rest: the label value that becomes +1 (all others -1). Default: none (labels used as they are). */
  positive?: number | null;
  /**
   * Screen the kernel problem instead (thesis ch. 4, "Extension to kernel methods"): `1/n sum_i loss(t_i) + lambda
   * ||h||^2` over the kernel's function space, penalty 'l2' only. Exact, through the eigendecomposition of the
   * n x n Gram matrix: O(n^3) time and about 4 n^2 doubles, so at most `ind.limits.maxKernelSamples` (3000) samples. Not in
   * `path`. Default: none (the linear problem).
   */
  kernel?: KernelOptions | null;
  /** Called after each gap check; return false to stop the solver (the result then has cancelled = true). A
   * throwing callback stops it too, and its exception is rethrown once wasm has returned. */
  onProgress?: (progress: ScreenProgress) => void | boolean;
}

/** Options of ScreeningDataset.path: screen's settings (but lambda) and the lambdas to visit. */
export interface PathOptions extends Omit<ScreenOptions, 'lambda' | 'onProgress'> {
  /** The lambdas, in the order visited (normally decreasing). Default: the geometric grid below. */
  lambdas?: number[];
  /** The geometric grid: `count` lambdas from lambdaMax down to lambdaMax * ratio, evenly spaced in log scale
   * (defaults 1, 0.01, 20: those of `inductive path`). */
  lambdaMax?: number;
  ratio?: number;
  count?: number;
  /** false: the same path without screening (warm starts only), to compare times with. Default true. */
  screening?: boolean;
  /** Also screen each warm start with the static test (balls, plus `ellipsoidSteps`) before solving. Default false. */
  staticScreen?: boolean;
  /**
   * With screening, each solve iterates over the samples not flat at its warm start and brings back those that
   * leave the flat region as the gap closes; it stops at the whole problem's certified gap, so the solutions are
   * those without it (as `inductive path --working-set`). 1.5-2.2x faster paths on a9a, MNIST and Fashion-MNIST
   * with safe logistic + elastic net (bench/README.md). Default false.
   */
  workingSet?: boolean;
  /** Stages "solve" (after each gap check) and "path" (after each lambda), with the fraction of lambdas done;
   * return false to cancel (throws InductiveError 'cancelled'). */
  onProgress?: ProgressCallback;
}

/** scikit-learn's conventions: linear a.b; gaussian exp(-gamma ||a - b||^2); polynomial (gamma a.b + coef0)^degree. */
export interface KernelOptions {
  type: 'linear' | 'gaussian' | 'polynomial';
  /** > 0; default (or 0): 1 / p. */
  gamma?: number;
  /** Polynomial: an integer in 1..20. Default 3. */
  degree?: number;
  /** Polynomial. Default 1. */
  coef0?: number;
}

/** The kernel a screen() ran with. */
export interface KernelReport {
  type: KernelOptions['type'];
  /** e.g. "gaussian(gamma=0.5)". */
  description: string;
  /** The gamma used (the default resolved). */
  gamma: number;
  degree: number;
  coef0: number;
  /** The rank of the Gram matrix's kernel map (eigenvalues above 1e-10 of the largest). */
  rank: number;
  /** Building the Gram matrix and its eigendecomposition. */
  seconds: number;
}

/** One lambda of a path. */
export interface PathPoint {
  lambda: number;
  /** Samples screened at this lambda (static, sequential and dynamic), and as a fraction of n. */
  nScreened: number;
  /** Of nScreened, those the static test removed from the warm start (staticScreen; else 0). */
  nStaticScreened: number;
  fractionScreened: number;
  epochs: number;
  /** Screening + solving at this lambda. */
  seconds: number;
  converged: boolean;
  primal: number | null;
  gap: number | null;
}

/** The core's path report (what `inductive path` prints, camelCased, without the CLI's comparison run). */
export interface PathResult {
  n: number;
  p: number;
  loss: ScreeningLoss;
  mu: number;
  penalty: ScreeningPenalty;
  intercept: boolean;
  screening: boolean;
  staticScreen: boolean;
  /** The static test's ellipsoid steps (0 without staticScreen). */
  ellipsoidSteps: number;
  workingSet: boolean;
  /** The lambdas visited, in order. */
  lambdas: number[];
  points: PathPoint[];
  /** The sum of the points' seconds. */
  seconds: number;
}

export type CompressionRanking = 'screening' | 'margin' | 'random';

/** Options of ScreeningDataset.compressionCurve: screen's problem settings, the held-out split and the curve. */
export interface CompressionOptions extends Omit<ScreenOptions, 'kernel' | 'dynamic' | 'onProgress'> {
  /** The fraction of samples held out as the test set (stratified by label for classification). Default 0.2. */
  testFraction?: number;
  /** Seed of the split and of the random ranking (the same split as `inductive compress --seed`). Default 0. */
  seed?: number;
  /** Fractions of the training samples to remove, each in [0, 1). Default 0, 0.1, ..., 0.9. */
  fractions?: number[];
  /** Orders of removal: by screening score, by margin, at random. Default all three. */
  rankings?: CompressionRanking[];
  /** Stages "fit" (the full problem) and "refit" (fraction of all refits done); return false to cancel (throws
   * InductiveError 'cancelled'). */
  onProgress?: ProgressCallback;
}

/** One refit of a compression curve. */
export interface CompressionPoint {
  fractionRemoved: number;
  nKept: number;
  /** Classification: the fraction of test signs right; regression: |prediction - target| <= mu. */
  testAccuracy: number;
  testLoss: number | null;
  /** The full training problem's objective at the refit, and its certified duality gap there: an upper bound on
   * how far the compressed data's model is from the full data's (trainObjective - P*). */
  trainObjective: number | null;
  certifiedGap: number | null;
  epochs: number;
}

export interface CompressionResult {
  nTrain: number;
  nTest: number;
  p: number;
  loss: ScreeningLoss;
  penalty: ScreeningPenalty;
  lambda: number;
  mu: number;
  /** The full training problem's solution. */
  fullPrimal: number | null;
  fullGap: number | null;
  fullEpochs: number;
  fullConverged: boolean;
  fullTestAccuracy: number;
  /** Training samples the static test screens at the full solution: removing up to this many by screening score
   * leaves the model unchanged; and as a fraction of nTrain. */
  nCertified: number;
  fractionCertified: number;
  curves: { ranking: CompressionRanking; points: CompressionPoint[] }[];
  seconds: number;
}

/** The solver's trace: one entry per gap check. */
export interface ScreenHistory {
  epoch: Int32Array;
  gap: Float64Array;
  /** Samples still active after that check's screening. */
  active: Int32Array;
  /** 1 - active / n. */
  fractionScreened: Float64Array;
}

export interface ScreenResult {
  n: number;
  p: number;
  loss: ScreeningLoss;
  mu: number;
  penalty: ScreeningPenalty;
  lambda: number;
  /** [n]: 1 where the sample is screened (removed by dynamic screening or by the static test at the solution). */
  screened: Uint8Array;
  /** Indices of the samples not screened, increasing. */
  kept: Int32Array;
  /** [n]: the static test's scores at the solution; > 0 means screened by it. */
  scores: Float32Array;
  /** [n]: the decision values / predictions a_i^T w + b at the solution (h(a_i) + b with a kernel). */
  margins: Float32Array;
  /** [p]: w (empty with a kernel: see alpha). */
  coefficients: Float32Array;
  /** With a kernel, [n]: the dual coefficients, h(a) = sum_j alpha_j K(a_j, a) + b; else empty. */
  alpha: Float64Array;
  /** The kernel run, or null (the linear problem). */
  kernel: KernelReport | null;
  /** b (0 without an intercept). */
  intercept: number;
  nScreened: number;
  /** Removed by the solver's dynamic screening / by the static test at the solution. */
  nDynamic: number;
  nStatic: number;
  /** Of nStatic, those the balls alone screen; the rest needed the ellipsoid method. */
  nStaticByBalls: number;
  /** Ellipsoid-method steps the static test took (fewer than asked when the ellipsoid cannot shrink further). */
  ellipsoidSteps: number;
  /** Pure L1 with a smooth loss: the features (+ intercept) the L1 support test left; else null. */
  l1SupportSize: number | null;
  fractionScreened: number;
  epochs: number;
  converged: boolean;
  /** Stopped by onProgress. */
  cancelled: boolean;
  /** Objectives of the final (reduced) problem and their gap; null where not finite. */
  primal: number | null;
  dual: number | null;
  gap: number | null;
  /** gap / |primal|: what `tol` bounds. */
  relativeGap: number | null;
  solveSeconds: number;
  screenSeconds: number;
  history: ScreenHistory;
}

interface Description {
  n: number;
  p: number;
  nnz: number;
  sparse: boolean;
  labels: number[] | null;
  yMin: number;
  yMax: number;
}

/** What the binding returns: the result's scalars, and the history as plain arrays (per-sample arrays go through
 * wasm memory instead). */
type Report = Omit<ScreenResult, 'screened' | 'kept' | 'scores' | 'margins' | 'coefficients' | 'alpha' | 'history'> & {
  history: { epoch: number[]; gap: number[]; active: number[] };
};

const SCREEN_KEYS: ReadonlySet<string> = new Set([
  'loss',
  'mu',
  'penalty',
  'l1Ratio',
  'lambda',
  'intercept',
  'tol',
  'maxEpochs',
  'gapEvery',
  'dynamic',
  'positive',
  'ellipsoidSteps',
  'kernel',
  'onProgress',
]);
const LOAD_KEYS: ReadonlySet<string> = new Set(['format', 'header', 'labelColumn', 'delimiter']);

/** A dataset in wasm memory, ready to screen. dispose() it (or `using`) when done. */
export class ScreeningDataset extends WasmObject<DatasetHandle> {
  readonly #module: InductiveModule;
  /** Samples and features. */
  readonly n: number;
  readonly p: number;
  /** Stored non-zeros (n p for dense data). */
  readonly nnz: number;
  /** Stored sparse (LIBSVM) or dense (CSV, arrays). */
  readonly sparse: boolean;
  /** The distinct label values, increasing (null when there are more than 64: regression targets). */
  readonly labels: number[] | null;
  /** Smallest and largest label / target. */
  readonly yMin: number;
  readonly yMax: number;

  /** @internal Use `ind.loadDataset(...)` or `ind.datasetFromArrays(...)`. */
  constructor(module: InductiveModule, handle: DatasetHandle) {
    super(handle, 'ScreeningDataset');
    this.#module = module;
    const d = parseJson<Description>(handle.describe(), 'loadDataset');
    this.n = d.n;
    this.p = d.p;
    this.nnz = d.nnz;
    this.sparse = d.sparse;
    this.labels = d.labels;
    this.yMin = d.yMin;
    this.yMax = d.yMax;
  }

  /**
   * Solves `min_w 1/n sum_i loss(t_i) + lambda R(w)` to a relative duality gap `tol`, screening samples as the
   * gap closes, then applies the static test at the solution. Every screened sample is certified: removing it
   * leaves the optimum unchanged.
   */
  screen(options?: ScreenOptions): ScreenResult {
    const where = 'screen';
    checkOptionsObject(where, options);
    const module = this.#module;
    const json = screenOptionsJson(where, options ?? {});
    const n = this.n;
    const p = this.p;
    const kernel = options?.kernel !== undefined && options.kernel !== null;
    const progress = safeProgress(where, options?.onProgress, n);
    // A dispose() from onProgress frees the dataset when the call returns (WasmObject).
    return this.use(
      where,
      (handle) => {
        return withBlock(
          module,
          [
            { type: 'u8', length: n },
            { type: 'f32', length: n },
            { type: 'f32', length: n },
            { type: 'f32', length: p + 1 },
            { type: 'f64', length: kernel ? n : 0 },
          ],
          where,
          (block) => {
            const at = (i: number): number => block.addresses[i] ?? 0;
            const text = handle.screen(
              { options: json, screened: at(0), scores: at(1), margins: at(2), coefficients: at(3), alpha: at(4) },
              progress.callback,
            );
            progress.rethrow();
            if (text === '') throw lastError(module);
            const r = parseJson<Report>(text, where);
            const screened = block.readU8(0);
            const coefficients = block.readF32(3);
            const kept = new Int32Array(n - r.nScreened);
            for (let i = 0, k = 0; i < n; ++i) if (screened[i] === 0) kept[k++] = i;
            const active = Int32Array.from(r.history.active);
            return {
              n: r.n,
              p: r.p,
              loss: r.loss,
              mu: r.mu,
              penalty: r.penalty,
              lambda: r.lambda,
              screened,
              kept,
              scores: block.readF32(1),
              margins: block.readF32(2),
              coefficients: kernel ? new Float32Array(0) : coefficients.slice(0, p),
              alpha: kernel ? block.readF64(4) : new Float64Array(0),
              kernel: r.kernel,
              intercept: r.intercept,
              nScreened: r.nScreened,
              nDynamic: r.nDynamic,
              nStatic: r.nStatic,
              nStaticByBalls: r.nStaticByBalls,
              ellipsoidSteps: r.ellipsoidSteps,
              l1SupportSize: r.l1SupportSize,
              fractionScreened: r.fractionScreened,
              epochs: r.epochs,
              converged: r.converged,
              cancelled: r.cancelled,
              primal: r.primal,
              dual: r.dual,
              gap: r.gap,
              relativeGap: r.relativeGap,
              solveSeconds: r.solveSeconds,
              screenSeconds: r.screenSeconds,
              history: {
                epoch: Int32Array.from(r.history.epoch),
                gap: Float64Array.from(r.history.gap),
                active,
                fractionScreened: Float64Array.from(active, (a) => 1 - a / n),
              },
            };
          },
        );
      },
      'screening',
    );
  }

  /**
   * A regularisation path: the problem solved at each lambda in turn, each warm-started from the previous
   * solution, with sequential and dynamic safe screening (or without: `screening: false`, to compare). Per lambda:
   * the fraction screened, epochs and time (core regularization_path, as `inductive path`).
   */
  path(options?: PathOptions): PathResult {
    const where = 'path';
    checkOptionsObject(where, options);
    const o = (options ?? {}) as Record<string, unknown>;
    const { lambdas, lambdaMax, ratio, count, screening, onProgress, ...settings } = o;
    const json = screenOptionsJson(where, settings as ScreenOptions, PATH_SETTING_KEYS);
    let grid: unknown;
    if (lambdas !== undefined) {
      if (!Array.isArray(lambdas) || lambdas.some((l) => typeof l !== 'number' || !Number.isFinite(l))) {
        throw invalid(`${where}: lambdas must be an array of finite numbers`);
      }
      if (lambdaMax !== undefined || ratio !== undefined || count !== undefined) {
        throw invalid(`${where}: give lambdas or the grid (lambdaMax, ratio, count), not both`);
      }
      grid = lambdas;
    } else {
      const d = optionDefaults(this.#module).path;
      grid = {
        lambdaMax: checkNumber(where, 'lambdaMax', lambdaMax, d.lambdaMax),
        ratio: checkNumber(where, 'ratio', ratio, d.ratio),
        count: checkInt(where, 'count', count, d.count),
      };
    }
    const withScreening = checkBoolean(where, 'screening', screening, true);
    const progress = safeCancellableProgress(where, onProgress);
    return this.use(
      where,
      (handle) => {
        const text = handle.path(json, JSON.stringify(grid), withScreening, progress.callback);
        progress.rethrow();
        if (text === '') throw lastError(this.#module);
        return parseJson<PathResult>(text, where);
      },
      'screening',
    );
  }

  /**
   * Dataset compression (thesis ch. 4): holds out a test set, solves the training problem, then for each fraction
   * removes that many training samples (easiest first by screening score, by margin, or at random), refits on the
   * rest and reports test accuracy and the certified gap to the full model (core compress_dataset, as
   * `inductive compress`).
   */
  compressionCurve(options?: CompressionOptions): CompressionResult {
    const where = 'compressionCurve';
    checkOptionsObject(where, options);
    const o = (options ?? {}) as Record<string, unknown>;
    const { testFraction, seed, fractions, rankings, onProgress, ...settings } = o;
    const json = screenOptionsJson(where, settings as ScreenOptions, COMPRESSION_SETTING_KEYS);
    const curve = compressionJson(this.#module, where, { testFraction, seed, fractions, rankings });
    const progress = safeCancellableProgress(where, onProgress);
    return this.use(
      where,
      (handle) => {
        const text = handle.compression(json, curve, progress.callback);
        progress.rethrow();
        if (text === '') throw lastError(this.#module);
        return parseJson<CompressionResult>(text, where);
      },
      'screening',
    );
  }
}

/** The thesis' dataset compression (`inductive compress`). */
function compressionJson(module: InductiveModule, where: string, o: Record<string, unknown>): string {
  const d = optionDefaults(module).compression;
  const testFraction = checkNumber(where, 'testFraction', o.testFraction, d.testFraction);
  if (!Number.isFinite(testFraction))
    throw invalid(`${where}: testFraction must be a finite number: got ${testFraction}`);
  const seed = checkInt(where, 'seed', o.seed, d.seed);
  if (seed < 0) throw invalid(`${where}: seed must be >= 0: got ${seed}`);
  const fractions = o.fractions ?? d.fractions;
  if (!Array.isArray(fractions) || fractions.some((f) => typeof f !== 'number' || !Number.isFinite(f))) {
    throw invalid(`${where}: fractions must be an array of finite numbers`);
  }
  const rankings = o.rankings ?? d.rankings;
  if (!Array.isArray(rankings) || rankings.some((r) => r !== 'screening' && r !== 'margin' && r !== 'random')) {
    throw invalid(`${where}: rankings must be an array of 'screening', 'margin' or 'random'`);
  }
  return JSON.stringify({ testFraction, seed, fractions, rankings });
}

/** Parses LIBSVM or CSV text (a string, or bytes that may be gzip-compressed) into a new ScreeningDataset. */
export function loadDataset(module: InductiveModule, text: unknown, options: unknown): ScreeningDataset {
  const where = 'loadDataset';
  if (options === undefined || options === null || typeof options !== 'object') {
    throw invalid(
      `${where}: options must be an object { format: 'libsvm' | 'csv', header?, labelColumn?, ` +
        `delimiter? }: got ${typeName(options)}`,
    );
  }
  const o = options as Record<string, unknown>;
  checkKeys(where, o, LOAD_KEYS);
  if (typeof o.format !== 'string') {
    throw invalid(`${where}: format must be 'libsvm' or 'csv': got ${typeName(o.format)}`);
  }
  const csv: Record<string, unknown> = {};
  if (o.format === 'csv') {
    const d = optionDefaults(module).csv;
    csv.header = checkBoolean(where, 'header', o.header, d.header);
    csv.labelColumn = checkInt(where, 'labelColumn', o.labelColumn, d.labelColumn);
    if (o.delimiter !== undefined && typeof o.delimiter !== 'string') {
      throw invalid(`${where}: delimiter must be a string: got ${typeName(o.delimiter)}`);
    }
    csv.delimiter = o.delimiter ?? d.delimiter;
  } else {
    const extra = ['header', 'labelColumn', 'delimiter'].filter((k) => o[k] !== undefined);
    if (extra.length > 0) {
      throw invalid(`${where}: ${extra.join(', ')} apply to CSV only, not to format '${o.format}'`);
    }
  }
  let bytes: Uint8Array;
  if (typeof text === 'string') bytes = new TextEncoder().encode(text);
  else if (text instanceof Uint8Array) bytes = text;
  else {
    throw new InductiveError(
      'invalid_argument',
      `${where}: text must be a string or a Uint8Array (gzip allowed): got ${typeName(text)}`,
    );
  }
  const data = bytes;
  return adoptHandle(new module.DatasetHandle(), (handle) => {
    withBlock(module, [{ type: 'u8', length: data.length }], where, (block) => {
      block.write(0, data);
      if (!handle.loadText(block.addresses[0] ?? 0, data.length, o.format as string, JSON.stringify(csv))) {
        throw lastError(module);
      }
    });
    return new ScreeningDataset(module, handle);
  });
}

/** A dataset from dense row-major features x [n, p] and labels/targets y [n] (both Float32Array). */
export function datasetFromArrays(
  module: InductiveModule,
  x: unknown,
  n: unknown,
  p: unknown,
  y: unknown,
): ScreeningDataset {
  const where = 'datasetFromArrays';
  const rows = checkCount(where, 'n', n);
  const cols = checkCount(where, 'p', p);
  const features = checkArray(where, 'x', x, Float32Array, rows * cols, `n x p = ${rows} x ${cols}`);
  const labels = checkArray(where, 'y', y, Float32Array, rows, 'n');
  return adoptHandle(new module.DatasetHandle(), (handle) => {
    withBlock(
      module,
      [
        { type: 'f32', length: features.length },
        { type: 'f32', length: rows },
      ],
      where,
      (block) => {
        block.write(0, features);
        block.write(1, labels);
        if (!handle.loadDense(block.addresses[0] ?? 0, rows, cols, block.addresses[1] ?? 0)) throw lastError(module);
      },
    );
    return new ScreeningDataset(module, handle);
  });
}

const PATH_SETTING_KEYS: ReadonlySet<string> = new Set([
  ...[...SCREEN_KEYS].filter((k) => k !== 'lambda' && k !== 'onProgress' && k !== 'kernel'),
  'staticScreen',
  'workingSet',
]);

const COMPRESSION_SETTING_KEYS: ReadonlySet<string> = new Set(
  [...SCREEN_KEYS].filter((k) => k !== 'onProgress' && k !== 'kernel' && k !== 'dynamic'),
);

/** The options as the binding's JSON; types are checked here, values (lambda > 0, known loss, ...) by the core. */
function screenOptionsJson(where: string, o: ScreenOptions, known: ReadonlySet<string> = SCREEN_KEYS): string {
  const r = o as Record<string, unknown>;
  checkKeys(where, r, known);
  const out: Record<string, unknown> = {};
  for (const key of ['loss', 'penalty'] as const) {
    const v = r[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw invalid(`${where}: ${key} must be a string: got ${typeName(v)}`);
    out[key] = v;
  }
  for (const key of ['mu', 'l1Ratio', 'lambda', 'tol', 'positive'] as const) {
    const v = r[key];
    if (v === undefined || (key === 'positive' && v === null)) continue;
    if (typeof v !== 'number') throw invalid(`${where}: ${key} must be a number: got ${typeName(v)}`);
    // JSON has no NaN or infinities: say so here rather than let them arrive as null.
    if (!Number.isFinite(v)) throw invalid(`${where}: ${key} must be a finite number: got ${v}`);
    out[key] = v;
  }
  for (const key of ['maxEpochs', 'gapEvery', 'ellipsoidSteps'] as const) {
    if (r[key] !== undefined) out[key] = checkInt(where, key, r[key], 0);
  }
  for (const key of ['intercept', 'dynamic', 'staticScreen', 'workingSet'] as const) {
    if (r[key] !== undefined) out[key] = checkBoolean(where, key, r[key], false);
  }
  if (r.kernel !== undefined && r.kernel !== null) out.kernel = kernelJson(where, r.kernel);
  return JSON.stringify(out);
}

const KERNEL_KEYS: ReadonlySet<string> = new Set(['type', 'gamma', 'degree', 'coef0']);

function kernelJson(where: string, k: unknown): Record<string, unknown> {
  if (typeof k !== 'object' || k === null || Array.isArray(k)) {
    throw invalid(`${where}: kernel must be an object {type, gamma?, degree?, coef0?}: got ${typeName(k)}`);
  }
  const o = k as Record<string, unknown>;
  checkKeys(`${where}: kernel`, o, KERNEL_KEYS);
  if (o.type !== 'linear' && o.type !== 'gaussian' && o.type !== 'polynomial') {
    throw invalid(`${where}: kernel.type must be 'linear', 'gaussian' or 'polynomial': got ${JSON.stringify(o.type)}`);
  }
  const out: Record<string, unknown> = { type: o.type };
  for (const key of ['gamma', 'coef0'] as const) {
    const v = o[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw invalid(`${where}: kernel.${key} must be a finite number: got ${typeName(v)} ${String(v)}`);
    }
    out[key] = v;
  }
  if (o.degree !== undefined) out.degree = checkInt(where, 'kernel.degree', o.degree, 1);
  return out;
}

function checkKeys(where: string, o: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const key of Object.keys(o)) {
    if (!known.has(key)) {
      throw invalid(`${where}: unknown option '${key}': expected one of ${[...known].join(', ')}`);
    }
  }
}

/** screen's onProgress as the callback handed to wasm (guardedCallback: a throwing callback stops the solver too). */
function safeProgress(
  where: string,
  onProgress: unknown,
  n: number,
): {
  callback: ((epoch: number, primal: number, dual: number, gap: number, active: number) => boolean) | undefined;
  rethrow(): void;
} {
  const user = checkProgress(where, onProgress) as ((p: ScreenProgress) => unknown) | undefined;
  return guardedCallback(
    user === undefined
      ? undefined
      : (epoch: number, primal: number, dual: number, gap: number, active: number) =>
          user({ epoch, primal, dual, gap, active, fractionScreened: 1 - active / n }),
  );
}
