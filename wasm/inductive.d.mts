// Types of the emscripten factory built from wasm/bindings.cpp (written by hand: em++ 3.1.6 has no --emit-tsd).
// Keep in sync with EMSCRIPTEN_BINDINGS in bindings.cpp. Addresses are byte offsets into wasm memory.

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
