// Types of the emscripten factory built from wasm/bindings.cpp and wasm/bindings_screening.cpp (written by hand:
// em++ 3.1.6 has no --emit-tsd). Keep in sync with their EMSCRIPTEN_BINDINGS. Addresses are byte offsets into wasm
// memory.

export interface SinkhornCall {
  cost: number; n: number; p: number; a: number; b: number;
  batch: number; nMax: number; pMax: number;
  eps: number; maxIter: number; tol: number; similarity: boolean;
  plan: number; f: number; g: number; nIter: number; marginalError: number; converged: number; costValue: number;
}

/** OtkeHandle.embed: sequences (packed UTF-8 letters + batch + 1 byte offsets) or padded sets; outputs optional. */
export interface OtkeEmbedCall {
  batch: number; sequences: boolean;
  bytes: number; offsets: number; nameBytes: number; nameOffsets: number;
  x: number; lengths: number; nMax: number; dim: number;
  /** [batch, D] */
  embeddings: number;
  /** [q, batch, planStride, p] */
  plans: number; planStride: number;
  /** predict: apply the head (an error when there is none); logits, probabilities: [batch, C] each. */
  predict: boolean; logits: number; probabilities: number;
}

/** OtkeHandle.predict: the head on embeddings x [batch, dim]. */
export interface OtkePredictCall {
  x: number; batch: number; dim: number; logits: number; probabilities: number;
}

/** OtkeHandle.fitHead: embeddings x [batch, dim], labels [batch] (int32) in [0, classes). */
export interface OtkeFitHeadCall {
  x: number; labels: number; batch: number; dim: number; classes: number;
  /** JSON array of `classes` names, or "[]". */
  labelNames: string;
  /** > 0: this L2 penalty; 0: chosen by cross-validation or the default. */
  lambda: number;
  minPerClass: number; maxFolds: number; maxIter: number; tol: number;
}

/** Owns one inductive::OtkeModel in wasm memory; call delete() when done. Methods report failure as data. */
export interface OtkeHandle {
  /** Parses and validates a model file in [address, address + size); false on failure. */
  load(address: number, size: number): boolean;
  /** JSON {config, featureDim, embedDim, outputDim, formatVersion, producer}; "" when nothing is loaded. */
  describe(): string;
  embed(call: OtkeEmbedCall): boolean;
  predict(call: OtkePredictCall): boolean;
  /** Fits a head into `out` (a copy of this model with the new head); a JSON report, "" on failure. */
  fitHead(call: OtkeFitHeadCall, out: OtkeHandle, progress: ((stage: string, fraction: number) => void) | undefined): string;
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
 * tol, maxEpochs, dynamic, positive, gapEvery; unknown keys refused). Outputs optional (address 0): screened [n]
 * (u8 0/1), scores [n] (f32, > 0: screened by the static test at the solution), margins [n] (f32, a_i^T w + b),
 * coefficients [p + 1] (f32, w then b).
 */
export interface ScreenCall {
  options: string;
  screened: number; scores: number; margins: number; coefficients: number;
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
  screen(call: ScreenCall,
    progress: ((epoch: number, primal: number, dual: number, gap: number, nActive: number) => boolean | undefined)
      | undefined): string;
  delete(): void;
  isDeleted(): boolean;
}

export interface InductiveModule {
  // Views on wasm memory. They are replaced (the old ones detached) whenever memory grows: read them afresh
  // after any call that may allocate.
  readonly HEAPU8: Uint8Array;
  readonly HEAP32: Int32Array;
  readonly HEAPF32: Float32Array;
  _malloc(size: number): number;
  _free(address: number): void;

  /** false on failure; lastErrorCode()/lastErrorMessage() then say why. */
  sinkhornBatch(call: SinkhornCall): boolean;
  /** An empty OTKE model handle (see OtkeHandle). */
  OtkeHandle: new () => OtkeHandle;
  /** An empty dataset handle for safe sample screening (see DatasetHandle). */
  DatasetHandle: new () => DatasetHandle;
  /** JSON describing the model file in [address, address + size); "" on failure. */
  modelInfo(address: number, size: number): string;
  lastErrorCode(): string;
  lastErrorMessage(): string;
  version(): string;
  producer(): string;
  simdKernel(): string;
}

export interface ModuleOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

/** The URL the factory fetches inductive.wasm from when neither wasmBinary nor locateFile is given. */
export declare const wasmUrl: string;

declare function createInductiveModule(options?: ModuleOptions): Promise<InductiveModule>;
export default createInductiveModule;
