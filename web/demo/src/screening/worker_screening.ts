// The worker side of the "Screening" panel: it owns the datasets (one per source, loaded on first use; a dropped
// file replaces the previous one) and screens them with the library's ScreeningDataset.screen, or runs a
// regularisation path on them (ScreeningDataset.path).

import { InductiveError, type Inductive, type ProgressCallback, type ScreeningDataset } from 'inductive';
import type {
  ScreeningDatasetInfo,
  ScreeningLoadFileRequest,
  ScreeningCompressRequest,
  ScreeningCompressResponse,
  ScreeningPathRequest,
  ScreeningPathResponse,
  ScreeningRequest,
  ScreeningResponse,
  ScreeningRunRequest,
  ScreeningRunResponse,
  ScreeningSourceId,
} from '../protocol';
import { BREAST_CANCER_URL, DIGITS_URL, intervalData, INTERVAL_N, standardisedCsv } from './datasets';

interface Loaded {
  dataset: ScreeningDataset;
  info: ScreeningDatasetInfo;
  /** The synthetic set's seed (it is rebuilt when the seed changes). */
  seed?: number;
}

const loaded = new Map<ScreeningSourceId, Loaded>();

async function fetchBytes(url: string, what: string): Promise<Uint8Array> {
  const res = await fetch(url);
  if (!res.ok) throw new InductiveError('io', `screening: cannot fetch ${what} (${res.url}): HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

function describe(source: ScreeningSourceId, name: string, d: ScreeningDataset): ScreeningDatasetInfo {
  return { source, name, n: d.n, p: d.p, nnz: d.nnz, sparse: d.sparse, labels: d.labels };
}

function keep(source: ScreeningSourceId, entry: Loaded): Loaded {
  loaded.get(source)?.dataset.dispose();
  loaded.set(source, entry);
  return entry;
}

async function dataset(ind: Inductive, req: Pick<ScreeningRunRequest, 'source' | 'seed'>): Promise<Loaded> {
  const have = loaded.get(req.source);
  if (have && (req.source !== 'interval' || have.seed === req.seed)) return have;
  switch (req.source) {
    case 'digits': {
      // gzip bytes as vendored: the library recognises and inflates them.
      const d = ind.loadDataset(await fetchBytes(DIGITS_URL, 'digits.csv.gz'), { format: 'csv' });
      return keep('digits', { dataset: d, info: describe('digits', 'digits.csv.gz', d) });
    }
    case 'breast-cancer': {
      const text = new TextDecoder().decode(await fetchBytes(BREAST_CANCER_URL, 'breast_cancer.csv'));
      const { x, y, n, p } = standardisedCsv(text);
      const d = ind.datasetFromArrays(x, n, p, y);
      return keep('breast-cancer', {
        dataset: d,
        info: describe('breast-cancer', 'breast_cancer.csv (standardised)', d),
      });
    }
    case 'interval': {
      const { x, y } = intervalData(req.seed);
      const d = ind.datasetFromArrays(x, INTERVAL_N, 1, y);
      return keep('interval', {
        dataset: d,
        info: describe('interval', `synthetic, seed ${req.seed}`, d),
        seed: req.seed,
      });
    }
    case 'file':
      throw new InductiveError('invalid_argument', 'screening: no file loaded yet: drop a LIBSVM or CSV file first');
  }
}

async function loadFile(ind: Inductive, req: ScreeningLoadFileRequest): Promise<ScreeningResponse> {
  let d: ScreeningDataset;
  try {
    const bytes = new Uint8Array(await req.file.arrayBuffer());
    d = ind.loadDataset(bytes, req.format === 'csv' ? { format: 'csv', header: req.header } : { format: 'libsvm' });
  } catch (e) {
    // The library names the format and the line ("libsvm: line 2: ..."); the page adds which file it was.
    if (e instanceof InductiveError) throw new InductiveError(e.code, `${req.name}: ${e.message}`);
    throw e;
  }
  const entry = keep('file', { dataset: d, info: describe('file', req.name, d) });
  return { method: 'screening-load-file', dataset: entry.info };
}

// A request's problem as the library's options (screen and compressionCurve take the same ones).
function problemOptions(req: Omit<ScreeningRunRequest, 'method'>) {
  return {
    loss: req.loss as never,
    penalty: req.penalty as never,
    lambda: req.lambda,
    intercept: req.intercept,
    ...(req.mu === null ? {} : { mu: req.mu }),
    positive: req.positive,
    tol: req.tol,
    maxEpochs: req.maxEpochs,
    ellipsoidSteps: req.ellipsoidSteps,
  };
}

async function run(
  ind: Inductive,
  req: ScreeningRunRequest,
  progress: ProgressCallback,
): Promise<ScreeningRunResponse> {
  const start = performance.now();
  const { dataset: d, info } = await dataset(ind, req);
  // The settings go to the library as typed: it is the validator, and the page shows what it reports.
  const r = d.screen({
    ...problemOptions(req),
    // The solver reports after each gap check; a cancel from the page stops it there.
    onProgress: (p) => progress('solve', p.fractionScreened) !== false,
  });
  if (r.cancelled) throw new InductiveError('cancelled', 'screen: cancelled');
  const computeMs = performance.now() - start;
  return {
    method: 'screening-run',
    dataset: info,
    fractionScreened: r.fractionScreened,
    nScreened: r.nScreened,
    nDynamic: r.nDynamic,
    nStatic: r.nStatic,
    nStaticByBalls: r.nStaticByBalls,
    ellipsoidSteps: r.ellipsoidSteps,
    epochs: r.epochs,
    converged: r.converged,
    gap: r.gap,
    primal: r.primal,
    solveSeconds: r.solveSeconds,
    screenSeconds: r.screenSeconds,
    historyEpoch: r.history.epoch,
    historyActive: r.history.active,
    historyGap: r.history.gap,
    screened: r.screened,
    scores: r.scores,
    margins: r.margins,
    coefficients: r.coefficients,
    intercept: r.intercept,
    computeMs,
  };
}

// The path twice, with screening then without, so that the page can show what screening saves at every lambda.
async function path(
  ind: Inductive,
  req: ScreeningPathRequest,
  progress: ProgressCallback,
): Promise<ScreeningPathResponse> {
  const { dataset: d, info } = await dataset(ind, req);
  const settings = {
    loss: req.loss as never,
    penalty: req.penalty as never,
    intercept: req.intercept,
    ...(req.mu === null ? {} : { mu: req.mu }),
    positive: req.positive,
    tol: req.tol,
    maxEpochs: req.maxEpochs,
    lambdaMax: req.lambdaMax,
    ratio: req.ratio,
    count: req.count,
  };
  const half = (offset: number, name: string) => (_: string, fraction: number) => progress(name, offset + fraction / 2);
  // With ellipsoid steps, the screened path also screens each warm start statically (balls + those steps).
  const regions = req.ellipsoidSteps > 0 ? { staticScreen: true, ellipsoidSteps: req.ellipsoidSteps } : {};
  const screened = d.path({
    ...settings,
    ...regions,
    workingSet: req.workingSet,
    onProgress: half(0, 'with screening'),
  });
  const plain = d.path({ ...settings, screening: false, onProgress: half(0.5, 'without screening') });
  return {
    method: 'screening-path',
    dataset: info,
    lambdas: screened.points.map((p) => p.lambda),
    fraction: screened.points.map((p) => p.fractionScreened),
    epochsWith: screened.points.map((p) => p.epochs),
    secondsWith: screened.points.map((p) => p.seconds),
    epochsWithout: plain.points.map((p) => p.epochs),
    secondsWithout: plain.points.map((p) => p.seconds),
    converged: [...screened.points, ...plain.points].every((p) => p.converged),
    workingSet: screened.workingSet,
  };
}

// The thesis' compression experiment: the three orders of removal on one held-out split.
async function compress(
  ind: Inductive,
  req: ScreeningCompressRequest,
  progress: ProgressCallback,
): Promise<ScreeningCompressResponse> {
  const { dataset: d, info } = await dataset(ind, req);
  const r = d.compressionCurve({
    ...problemOptions(req),
    fractions: req.fractions,
    onProgress: progress,
  });
  return {
    method: 'screening-compress',
    dataset: info,
    nTrain: r.nTrain,
    nTest: r.nTest,
    nCertified: r.nCertified,
    fullTestAccuracy: r.fullTestAccuracy,
    curves: r.curves.map((c) => ({
      ranking: c.ranking,
      kept: c.points.map((p) => p.nKept / r.nTrain),
      accuracy: c.points.map((p) => p.testAccuracy),
      gap: c.points.map((p) => p.certifiedGap),
    })),
    seconds: r.seconds,
  };
}

export async function solveScreening(
  ind: Inductive,
  req: ScreeningRequest,
  progress: ProgressCallback,
): Promise<ScreeningResponse> {
  switch (req.method) {
    case 'screening-load-file':
      return loadFile(ind, req);
    case 'screening-run':
      return run(ind, req, progress);
    case 'screening-path':
      return path(ind, req, progress);
    case 'screening-compress':
      return compress(ind, req, progress);
  }
}

/** The buffers a response can hand over to the page without copying (each its own: the library returns fresh arrays). */
export function screeningTransferables(res: ScreeningResponse): Transferable[] {
  if (res.method !== 'screening-run') return [];
  const arrays = [
    res.historyEpoch,
    res.historyActive,
    res.historyGap,
    res.screened,
    res.scores,
    res.margins,
    res.coefficients,
  ];
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
}
