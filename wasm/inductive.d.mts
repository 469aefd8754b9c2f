// Types of the emscripten factories (inductive.mjs, and inductive-mt.mjs with threads) built from wasm/bindings.cpp, bindings_screening.cpp and bindings_graphit.cpp (by hand:
// em++ 3.1.6 has no --emit-tsd). Keep in sync with their EMSCRIPTEN_BINDINGS. Addresses are byte offsets into wasm
// memory.

export interface SinkhornCall {
  cost: number;
  n: number;
  p: number;
  a: number;
  b: number;
  batch: number;
  nMax: number;
  pMax: number;
  eps: number;
  maxIter: number;
  tol: number;
  similarity: boolean;
  plan: number;
  f: number;
  g: number;
  nIter: number;
  marginalError: number;
  converged: number;
  costValue: number;
}

/** OtkeHandle.embed: sequences (packed UTF-8 letters + batch + 1 byte offsets) or padded sets; outputs optional. */
export interface OtkeEmbedCall {
  batch: number;
  sequences: boolean;
  bytes: number;
  offsets: number;
  nameBytes: number;
  nameOffsets: number;
  x: number;
  lengths: number;
  nMax: number;
  dim: number;
  /** [batch, D] */
  embeddings: number;
  /** [q, batch, planStride, p] */
  plans: number;
  planStride: number;
  /** predict: apply the head (an error when there is none); logits, probabilities: [batch, C] each. */
  predict: boolean;
  logits: number;
  probabilities: number;
}

/** OtkeHandle.predict: the head on embeddings x [batch, dim]. */
export interface OtkePredictCall {
  x: number;
  batch: number;
  dim: number;
  logits: number;
  probabilities: number;
}

/** OtkeHandle.fitHead: embeddings x [batch, dim], labels [batch] (int32) in [0, classes). */
export interface OtkeFitHeadCall {
  x: number;
  labels: number;
  batch: number;
  dim: number;
  classes: number;
  /** JSON array of `classes` names, or "[]". */
  labelNames: string;
  /** > 0: this L2 penalty; 0: chosen by cross-validation or the default. */
  lambda: number;
  minPerClass: number;
  maxFolds: number;
  maxIter: number;
  tol: number;
  /** JSON arrays: samples that choose lambda (holdout mode) and the lambdas to choose from; "[]" for none / default. */
  holdout: string;
  refit: boolean;
  lambdaGrid: string;
  /** > 0 and no holdout: the holdout is core's head_holdout (stratified, this share of each class, seeded). */
  holdoutFraction: number;
  seed: number;
}

/** Owns one inductive::OtkeModel in wasm memory; call delete() when done. Methods report failure as data. */
/**
 * Progress reported by a long call. Returning false stops the call: it then fails with code "cancelled". It must
 * not throw (a JS exception unwinding through wasm frames would leak the C++ objects alive there).
 */
export type ProgressFunction = (stage: string, fraction: number) => boolean | void;

/** OtkeHandle.fitUnsupervised: the model config (JSON) and the k-means settings. */
export interface OtkeFitCall {
  config: string;
  seed: number;
  kmeansIters: number;
  maxSamples: number;
  referenceUpdate: string;
  barycenterIters: number;
  barycenterEps: number;
}

export interface OtkeHandle {
  /** Parses and validates a model file in [address, address + size); false on failure. */
  load(address: number, size: number): boolean;
  /** JSON {config, featureDim, embedDim, outputDim, formatVersion, producer}; "" when nothing is loaded. */
  describe(): string;
  embed(call: OtkeEmbedCall): boolean;
  predict(call: OtkePredictCall): boolean;
  /** Fits a head into `out` (a copy of this model with the new head); a JSON report, "" on failure. */
  fitHead(call: OtkeFitHeadCall, out: OtkeHandle, progress: ProgressFunction | undefined): string;
  /** Unsupervised fit of a new model (config JSON, core defaults for what it leaves out) into this empty handle. */
  fitUnsupervised(input: OtkeEmbedCall, fit: OtkeFitCall, progress: ProgressFunction | undefined): boolean;
  /** Writes the model file into the handle; read it at bytesAddress()/bytesSize(), then releaseBytes(). */
  serialize(): boolean;
  bytesAddress(): number;
  bytesSize(): number;
  releaseBytes(): void;
  delete(): void;
  isDeleted(): boolean;
}

/**
 * DatasetHandle.screen: `options` is a JSON object (camelCase keys: loss, mu, penalty, l1Ratio, lambda, intercept,
 * tol, maxEpochs, dynamic, positive, gapEvery, ellipsoidSteps, staticScreen, kernel {type, gamma, degree, coef0};
 * unknown keys refused). Outputs optional (address 0): screened [n] (u8 0/1), scores [n] (f32, > 0: screened by
 * the static test at the solution), margins [n] (f32, a_i^T w + b, or h(a_i) + b with a kernel), coefficients
 * [p + 1] (f32, w then b; linear only), alpha [n] (f64, a kernel model's dual coefficients).
 */
export interface ScreenCall {
  options: string;
  screened: number;
  scores: number;
  margins: number;
  coefficients: number;
  alpha: number;
}

/** Owns one parsed dataset (features + raw labels) in wasm memory; call delete() when done. */
export interface DatasetHandle {
  /** Parses LIBSVM or CSV text (gzip allowed) in [address, address + size); options JSON: csv {header,
   * labelColumn, delimiter}. False on failure. */
  loadText(address: number, size: number, format: string, options: string): boolean;
  /** Dense row-major x [n, p] (f32) and labels/targets y [n] (f32). False on failure. */
  loadDense(x: number, n: number, p: number, y: number): boolean;
  /** JSON {n, p, nnz, sparse, labels (distinct values, at most 64, else null), yMin, yMax}; "" when empty. */
  describe(): string;
  /** Solves and screens; the JSON report, "" on failure. `progress` after each gap check: return false to stop. */
  screen(
    call: ScreenCall,
    progress:
      ((epoch: number, primal: number, dual: number, gap: number, nActive: number) => boolean | undefined) | undefined,
  ): string;
  /** Dataset compression: settings JSON as screen's, compression JSON {testFraction, seed, fractions, rankings};
   * the JSON report ("" on failure). `progress(stage, fraction)`: return false to cancel. */
  compression(settings: string, compression: string, progress: ProgressFunction | undefined): string;
  /** A regularisation path over a JSON array of lambdas; the JSON report ("" on failure). */
  path(options: string, lambdas: string, screening: boolean, progress: ProgressFunction | undefined): string;
  delete(): void;
  isDeleted(): boolean;
}

/**
 * Owns one inductive::GraphitModel in wasm memory; call delete() when done. Methods report failure as data
 * (false or ""; lastErrorCode()/lastErrorMessage() say why). A graph is given as n nodes, edges [nEdges, 2]
 * (int32 at `edges`) and a JSON array of n node-label names (the model's vocabulary, e.g. atom symbols).
 */
export interface GraphitHandle {
  /** Parses and validates a model file (kind "graphit") in [address, address + size). */
  load(address: number, size: number): boolean;
  /** JSON {config, nodeLabels, classes, task, outputs, layers, heads, dim, kernel (description or null),
   * formatVersion, producer}; "" when nothing is loaded. */
  describe(): string;
  /** Probabilities of the molecules of a JSON array of SMILES into [count, outputs] f32 at `out`. */
  predictSmiles(smilesJson: string, firstIndex: number, out: number): boolean;
  /** Probabilities of one graph into [outputs] f32 at `out`. */
  predictGraph(n: number, edges: number, nEdges: number, labelsJson: string, out: number): boolean;
  /** Explains one molecule: JSON {n, layers, outputs, kernel (bool), edges, selfLoops, classIndex?, atoms, bonds,
   * bondOrders, aromatic, charges}; "" on failure. The arrays stay in the handle: see resultAddress. */
  analyseSmiles(smiles: string): string;
  /** Explains one graph: JSON {n, layers, outputs, kernel, edges, selfLoops, classIndex?, atoms, bonds}. */
  analyseGraph(n: number, edges: number, nEdges: number, labelsJson: string): string;
  /** f32 arrays of the last analyse: 0 probabilities [outputs], 1 attention [layers, n, n], 2 saliency
   * [layers, n], 3 mean saliency [n], 4 kernel [n, n] (0: none). Valid until the next call on the handle. */
  resultAddress(which: number): number;
  releaseResult(): void;
  /**
   * Refits the output layer on labelled molecules (JSON array of SMILES, int32 labels at `labels`) into `out`;
   * options JSON {classes, lambda, minPerClass, maxFolds, maxIter, tol}. The fit report as JSON; "" on failure.
   */
  refitHead(
    smilesJson: string,
    labels: number,
    count: number,
    optionsJson: string,
    out: GraphitHandle,
    progress: ProgressFunction | undefined,
  ): string;
  serialize(): boolean;
  bytesAddress(): number;
  bytesSize(): number;
  releaseBytes(): void;
  delete(): void;
  isDeleted(): boolean;
}

export interface InductiveModule {
  // Views on wasm memory. They are replaced (the old ones detached) whenever memory grows: read them afresh
  // after any call that may allocate.
  readonly HEAPU8: Uint8Array;
  readonly HEAP32: Int32Array;
  readonly HEAPF32: Float32Array;
  readonly HEAPF64: Float64Array;
  _malloc(size: number): number;
  _free(address: number): void;

  /** false on failure; lastErrorCode()/lastErrorMessage() then say why. */
  sinkhornBatch(call: SinkhornCall): boolean;
  /** An empty OTKE model handle (see OtkeHandle). */
  OtkeHandle: new () => OtkeHandle;
  /** An empty dataset handle for safe sample screening (see DatasetHandle). */
  DatasetHandle: new () => DatasetHandle;
  /** An empty GraphiT model handle (see GraphitHandle). */
  GraphitHandle: new () => GraphitHandle;
  /** The molecule of a SMILES string: JSON {atoms, bonds, bondOrders, aromatic, charges}; "" on failure. */
  parseSmiles(smiles: string): string;
  /** FASTA records (core parse_fasta): JSON {names, sequences}; "" on failure. `what` names the text in messages. */
  parseFasta(text: string, what: string): string;
  /**
   * A labelled text table (core text_samples.h): format "labelled-sequences" (label<TAB>sequence lines) or "glue"
   * (a header naming 'sentence' and, when labelled, 'label'). JSON {samples, names, labels, classNames}; "" on failure.
   */
  parseTextSamples(text: string, format: string, what: string, labelled: boolean): string;
  /** The largest graph (nodes, atoms) GraphiT models run in this build. */
  maxGraphNodes(): number;
  /** The most samples kernel screening accepts in this build. */
  maxKernelSamples(): number;
  /** JSON describing the model file in [address, address + size); "" on failure. */
  modelInfo(address: number, size: number): string;
  lastErrorCode(): string;
  lastErrorMessage(): string;
  /** JSON: the core's default of every option the TS layer takes (web/src/defaults.ts reads it). */
  optionDefaults(): string;
  version(): string;
  producer(): string;
  simdKernel(): string;
  /** Threads a parallel loop of the core uses now (1 in the single-threaded module). */
  threads(): number;
  /** Caps the core's parallel loops (the threaded module: at most pthreadPoolSize + 1). */
  setThreads(n: number): void;
  /** "thread-pool" (inductive-mt) or "serial" (inductive). */
  threadRuntime(): string;
  /** Threaded module only: re-reads HEAPU8/HEAP32/HEAPF32/HEAPF64 when another thread grew the memory. */
  refreshHeapViews?(): void;
}

export interface ModuleOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
  /** Threaded module only: the Web Workers created up front for the core's thread pool (threads - 1). */
  pthreadPoolSize?: number;
  /** Threaded module only: the URL of inductive-mt.mjs, which each worker imports. */
  mainScriptUrlOrBlob?: string;
}

/** The URL the factory fetches inductive.wasm from when neither wasmBinary nor locateFile is given. */
export declare const wasmUrl: string;

declare function createInductiveModule(options?: ModuleOptions): Promise<InductiveModule>;
export default createInductiveModule;
