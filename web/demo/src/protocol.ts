// Messages between the page and the solver worker. One worker (one wasm instance) serves every panel;
// each request carries an id and gets exactly one reply, a result or an error, with the same id.

/** Optimal transport between two weighted point clouds in the unit square. */
export interface OtRequest {
  method: 'ot';
  /** Interleaved coordinates x0, y0, x1, y1, ...: n source points and p target points. */
  sourceXy: Float32Array;
  targetXy: Float32Array;
  /** Marginals a (length n) and b (length p), each summing to 1. */
  a: Float32Array;
  b: Float32Array;
  eps: number;
  maxIter: number;
  tol: number;
}

export interface OtResponse {
  method: 'ot';
  n: number;
  p: number;
  /** Row-major n × p transport plan (a copy owned by the page, not a view of wasm memory). */
  plan: Float32Array;
  nIter: number;
  marginalError: number;
  converged: boolean;
  /** The library's regularised cost <P, C> - eps H(P). */
  regularisedCost: number;
  /** The transport cost <P, C> alone, which is what a smaller eps lowers. */
  transportCost: number;
  /** Wall time of the sinkhorn() call alone, measured inside the worker. */
  computeMs: number;
}

// ---- Sequences (OTKE) ----------------------------------------------------------------------------------------
// The worker holds the model: the committed one ("original") and the one whose head the user fitted ("current",
// the original until a head is fitted). Requests say what to do with them; sequences travel as strings.

/** Loads the model (first call only) and describes it. */
export interface OtkeInfoRequest {
  method: 'otke-info';
}

export interface OtkeInfoResponse {
  method: 'otke-info';
  /** The model's file name and size in bytes. */
  fileName: string;
  fileBytes: number;
  producer: string;
  /** Class names of the head, in head order. */
  labels: string[];
  /** k-mer length, Nyström anchors K, supports p, references q, entropic eps, Sinkhorn iterations. */
  k: number;
  anchors: number;
  p: number;
  q: number;
  eps: number;
  iters: number;
  sigmaPos: number;
  /** Dimension of the embedding Phi (q p K). */
  outputDim: number;
}

/** Prediction, transport plans and embedding of one sequence, with the current head (and the original one). */
export interface OtkeAnalyseRequest {
  method: 'otke-analyse';
  sequence: string;
  /** Names the sequence in error messages. */
  name: string;
}

export interface OtkeAnalyseResponse {
  method: 'otke-analyse';
  /** Letters L, k-mers n = L - k + 1, k, supports p, references q, anchors K. */
  length: number;
  n: number;
  k: number;
  p: number;
  q: number;
  anchors: number;
  /** q plans, each n × p row-major, back to back (rows: k-mers in sequence order, columns: supports). */
  plans: Float32Array;
  /** Phi(x): q × p × K, reference-major then support-major. */
  embedding: Float32Array;
  /** Class probabilities of the current head, and of the committed head when the current one was fitted here. */
  probabilities: Float32Array;
  originalProbabilities: Float32Array | null;
  labels: string[];
  /** Wall time of the library calls in the worker. */
  computeMs: number;
}

/** Fits a new head on labelled sequences (always starting from the committed model); it becomes the current one. */
export interface OtkeFitHeadRequest {
  method: 'otke-fit-head';
  sequences: string[];
  names: string[];
  labels: string[];
}

export interface OtkeFitHeadResponse {
  method: 'otke-fit-head';
  labels: string[];
  /** The library's HeadFitReport (lambda and how it was chosen, training accuracy, class counts, ...). */
  lambda: number;
  lambdaChoice: string;
  trainAccuracy: number;
  cvAccuracy: number | null;
  folds: number | null;
  classCounts: number[];
  computeMs: number;
}

/**
 * Learns a new model from the page's sequences: the unsupervised stage (library fitOtke: anchors and references
 * from all the sequences), then a head from the labelled ones (fitHead). It becomes the current model (what
 * analyse, save and reset act on). Long: the page shows its progress and can cancel it.
 */
export interface OtkeLearnRequest {
  method: 'otke-learn';
  /**
   * FASTA (`label=<class>` in a header labels that sequence), as text or as the user's file: the worker reads and
   * parses it, so a file of a million sequences never blocks the page.
   */
  fasta: string | Blob;
  k: number;
  anchors: number;
  p: number;
  seed: number;
}

export interface OtkeLearnResponse {
  method: 'otke-learn';
  sequences: number;
  labelled: number;
  /** The learnt model: k-mer length, anchors K, supports p, embedding dimension, class names. */
  k: number;
  anchors: number;
  p: number;
  outputDim: number;
  labels: string[];
  lambda: number;
  lambdaChoice: string;
  trainAccuracy: number;
  classCounts: number[];
  /** Wall time of the unsupervised stage and of the head fit. */
  fitMs: number;
  headMs: number;
}

/** Goes back to the committed head. */
export interface OtkeResetHeadRequest {
  method: 'otke-reset-head';
}

export interface OtkeResetHeadResponse {
  method: 'otke-reset-head';
}

/** The current model as a .safetensors file. */
export interface OtkeSaveRequest {
  method: 'otke-save';
}

export interface OtkeSaveResponse {
  method: 'otke-save';
  bytes: Uint8Array;
  /** Whether the file holds a head fitted in the page, or a whole model learnt in it. */
  fitted: boolean;
  learnt: boolean;
}

/**
 * Opens the user's model file (one `inductive otke fit|train` wrote, natively or in a page) in place of the
 * committed one. The worker reads the file: it refuses one over MAX_MODEL_FILE_BYTES before reading it, and the
 * library refuses a corrupt or hostile one (a header claiming gigabytes) with bad_model_file before allocating.
 */
export interface OtkeOpenRequest {
  method: 'otke-open';
  file: Blob;
  name: string;
}

export interface OtkeOpenResponse {
  method: 'otke-open';
  info: OtkeInfoResponse;
}

/** The largest model file the demo opens (the library itself reads any size the wasm heap holds). */
export const MAX_MODEL_FILE_BYTES = 256 * 2 ** 20;

export type OtkeRequest =
  | OtkeInfoRequest
  | OtkeAnalyseRequest
  | OtkeFitHeadRequest
  | OtkeLearnRequest
  | OtkeResetHeadRequest
  | OtkeSaveRequest
  | OtkeOpenRequest;
export type OtkeResponse =
  | OtkeInfoResponse
  | OtkeAnalyseResponse
  | OtkeFitHeadResponse
  | OtkeLearnResponse
  | OtkeResetHeadResponse
  | OtkeSaveResponse
  | OtkeOpenResponse;

// ---- Safe sample screening ----------------------------------------------------------------------------------
// The worker keeps one dataset per source (the bundled ones are loaded on first use; a dropped file replaces the
// previous one) and screens it with the settings of each run request.

export type ScreeningSourceId = 'digits' | 'breast-cancer' | 'interval' | 'file';

/** What the library says about a loaded dataset. */
export interface ScreeningDatasetInfo {
  source: ScreeningSourceId;
  /** A file name or the bundled set's. */
  name: string;
  n: number;
  p: number;
  nnz: number;
  sparse: boolean;
  /** Distinct label values (null: more than 64, regression targets). */
  labels: number[] | null;
}

/**
 * Parses a dropped file (LIBSVM or CSV, gzip allowed); it becomes the 'file' source. The worker reads the file: the
 * page passes only the Blob's handle, so that a file of hundreds of MB never passes through the main thread.
 */
export interface ScreeningLoadFileRequest {
  method: 'screening-load-file';
  name: string;
  file: Blob;
  format: 'libsvm' | 'csv';
  /** CSV: skip the first line. */
  header: boolean;
}

export interface ScreeningLoadFileResponse {
  method: 'screening-load-file';
  dataset: ScreeningDatasetInfo;
}

/** Solves and screens one source with these settings (passed to ScreeningDataset.screen as they are). */
export interface ScreeningRunRequest {
  method: 'screening-run';
  source: ScreeningSourceId;
  /** The synthetic interval-regression set's seed. */
  seed: number;
  loss: string;
  penalty: string;
  lambda: number;
  /** Sent only for the losses that have one. */
  mu: number | null;
  intercept: boolean;
  /** One-vs-rest: this label becomes +1, every other -1. */
  positive: number | null;
  tol: number;
  maxEpochs: number;
  /** Ellipsoid-method steps of the static test (0: the balls only); a path then screens each warm start with it. */
  ellipsoidSteps: number;
}

export interface ScreeningRunResponse {
  method: 'screening-run';
  dataset: ScreeningDatasetInfo;
  fractionScreened: number;
  nScreened: number;
  nDynamic: number;
  nStatic: number;
  /** Of nStatic, those the balls alone screened, and the ellipsoid-method steps taken. */
  nStaticByBalls: number;
  ellipsoidSteps: number;
  epochs: number;
  converged: boolean;
  gap: number | null;
  primal: number | null;
  solveSeconds: number;
  screenSeconds: number;
  /** Per gap check: epoch and active samples (the fraction screened is 1 - active / n) and the gap. */
  historyEpoch: Int32Array;
  historyActive: Int32Array;
  historyGap: Float64Array;
  /** Per sample: screened (0/1), the static score at the solution (> 0: screened by it), a_i^T w + b. */
  screened: Uint8Array;
  scores: Float32Array;
  margins: Float32Array;
  coefficients: Float32Array;
  intercept: number;
  /** Wall time of load (first use) + screen in the worker. */
  computeMs: number;
}

/**
 * A regularisation path over `count` lambdas from lambdaMax down to lambdaMax * ratio, with screening and then
 * without (ScreeningDataset.path), for the same settings as a run (but lambda).
 */
export interface ScreeningPathRequest extends Omit<ScreeningRunRequest, 'method' | 'lambda'> {
  method: 'screening-path';
  lambdaMax: number;
  ratio: number;
  count: number;
  /** The screened path also iterates over a sample working set (PathOptions.workingSet). */
  workingSet: boolean;
}

export interface ScreeningPathResponse {
  method: 'screening-path';
  dataset: ScreeningDatasetInfo;
  lambdas: number[];
  /** Per lambda: the fraction screened, epochs and seconds with screening, epochs and seconds without. */
  fraction: number[];
  epochsWith: number[];
  secondsWith: number[];
  epochsWithout: number[];
  secondsWithout: number[];
  /** Whether every solve reached the tolerance, in both paths. */
  converged: boolean;
  workingSet: boolean;
}

/**
 * Dataset compression (ScreeningDataset.compressionCurve): a held-out test set, then test accuracy after removing
 * each fraction of the training samples by screening score, by margin and at random, for the settings of a run.
 */
export interface ScreeningCompressRequest extends Omit<ScreeningRunRequest, 'method'> {
  method: 'screening-compress';
  fractions: number[];
}

export interface CompressionCurveSeries {
  ranking: string;
  /** Per fraction: the fraction of training samples kept, the test accuracy, the certified gap to the full model. */
  kept: number[];
  accuracy: number[];
  gap: (number | null)[];
}

export interface ScreeningCompressResponse {
  method: 'screening-compress';
  dataset: ScreeningDatasetInfo;
  nTrain: number;
  nTest: number;
  /** Training samples certified removable at the full solution. */
  nCertified: number;
  fullTestAccuracy: number;
  curves: CompressionCurveSeries[];
  seconds: number;
}

export type ScreeningRequest =
  ScreeningLoadFileRequest | ScreeningRunRequest | ScreeningPathRequest | ScreeningCompressRequest;
export type ScreeningResponse =
  ScreeningLoadFileResponse | ScreeningRunResponse | ScreeningPathResponse | ScreeningCompressResponse;

// ---- Molecules (GraphiT) --------------------------------------------------------------------------------------
// The worker holds the committed GraphiT model and the "current" one: the committed model until the page refits
// its output layer, then the refitted model (what analyse and save use). Molecules travel as SMILES strings and
// are parsed by the library.

/** Loads the model (first call only) and describes it. */
export interface GraphitInfoRequest {
  method: 'graphit-info';
}

export interface GraphitInfoResponse {
  method: 'graphit-info';
  fileName: string;
  fileBytes: number;
  producer: string;
  /** Atom types the model knows, and its class names. */
  nodeLabels: string[];
  labels: string[];
  layers: number;
  heads: number;
  dim: number;
  /** e.g. "diffusion(beta=1)"; null for a plain transformer. */
  kernel: string | null;
}

/** Prediction, per-layer attention, saliency and kernel of one molecule. */
export interface GraphitAnalyseRequest {
  method: 'graphit-analyse';
  smiles: string;
}

export interface GraphitAnalyseResponse {
  method: 'graphit-analyse';
  smiles: string;
  /** Atoms (RDKit's order) and their symbols; bonds [u, v]. */
  n: number;
  atoms: string[];
  bonds: [number, number][];
  /** Class probabilities, names and the predicted class. */
  probabilities: Float32Array;
  labels: string[];
  classIndex: number;
  /** L head-averaged attention matrices n × n (row-major), back to back. */
  layers: number;
  attention: Float32Array;
  /** L × n saliency (column mass / n per layer), and its mean over layers. */
  saliency: Float32Array;
  meanSaliency: Float32Array;
  /** n × n kernel on the graph, null without one. */
  kernel: Float32Array | null;
  /** Whether the current model's output layer was refitted in the page (else it is the file's). */
  refitted: boolean;
  computeMs: number;
}

/** One labelled molecule of the refit examples. */
export interface GraphitLabelledMolecule {
  smiles: string;
  label: string;
}

/**
 * The refit card's example molecules (built in the worker, where the library parses them): MoleculeNet BBBP
 * molecules whose atoms the model knows, the first `perClass` permeable ones then the first non-permeable ones.
 */
export interface GraphitExamplesRequest {
  method: 'graphit-examples';
  perClass: number;
}

export interface GraphitExamplesResponse {
  method: 'graphit-examples';
  molecules: GraphitLabelledMolecule[];
  /** The data set, and how many of its molecules were read before enough were found, and how many skipped. */
  source: string;
  read: number;
  skipped: number;
}

/**
 * Refits the committed model's output layer on labelled molecules (library GraphitModel.refitHead: the encoder
 * and attention stay frozen); the result becomes the current model. Long: the page shows progress and can cancel.
 */
export interface GraphitRefitRequest {
  method: 'graphit-refit';
  smiles: string[];
  labels: string[];
}

export interface GraphitRefitResponse {
  method: 'graphit-refit';
  /** Class names of the new head (the distinct labels in order of first appearance) and their counts. */
  classes: string[];
  classCounts: number[];
  molecules: number;
  /** The L2 penalty and how it was chosen ('cross-validation', 'default' or 'given'). */
  lambda: number;
  lambdaChoice: string;
  trainAccuracy: number;
  cvAccuracy: number | null;
  folds: number | null;
  /** Wall time of refitHead in the worker. */
  computeMs: number;
}

/** Goes back to the committed model (the refitted one is freed). */
export interface GraphitResetRequest {
  method: 'graphit-reset';
}

export interface GraphitResetResponse {
  method: 'graphit-reset';
}

/** The current model as a .safetensors file (what the native CLI reads). */
export interface GraphitSaveRequest {
  method: 'graphit-save';
}

export interface GraphitSaveResponse {
  method: 'graphit-save';
  bytes: Uint8Array;
  /** Whether the file holds an output layer refitted in the page. */
  refitted: boolean;
}

export type GraphitRequest =
  | GraphitInfoRequest
  | GraphitAnalyseRequest
  | GraphitExamplesRequest
  | GraphitRefitRequest
  | GraphitResetRequest
  | GraphitSaveRequest;
export type GraphitResponse =
  | GraphitInfoResponse
  | GraphitAnalyseResponse
  | GraphitExamplesResponse
  | GraphitRefitResponse
  | GraphitResetResponse
  | GraphitSaveResponse;

/** Add more methods here as panels are added: the union keeps the worker's dispatch exhaustive. */
export type SolveRequest = OtRequest | OtkeRequest | ScreeningRequest | GraphitRequest;
export type SolveResponse = OtResponse | OtkeResponse | ScreeningResponse | GraphitResponse;
export type ResponseFor<R extends SolveRequest> = Extract<SolveResponse, { method: R['method'] }>;

export interface LibraryInfo {
  version: string;
  simd: string;
  /** Threads the core runs on in the worker, and why only one when so (see InitOptions.threads). */
  threads: number;
  threadsNote: string;
}

/** What crosses the worker boundary for any failure: an InductiveError keeps its code. */
export interface ErrorInfo {
  code: string;
  message: string;
}

/**
 * A request, and for long ones a cancel flag: an Int32Array on a SharedArrayBuffer (cross-origin isolated pages
 * only) that the page sets to 1 and the worker reads from the library's progress callback, which then returns
 * false and the call stops with code 'cancelled'. Without isolation the page cancels by restarting the worker.
 */
export type ToWorker = { id: number; request: SolveRequest; cancel?: Int32Array };

export type FromWorker =
  | { kind: 'ready'; info: LibraryInfo }
  | { kind: 'init-error'; error: ErrorInfo }
  | { kind: 'progress'; id: number; stage: string; fraction: number }
  | { kind: 'result'; id: number; response: SolveResponse }
  | { kind: 'error'; id: number; error: ErrorInfo };
