// Types of the emscripten factory built from wasm/bindings.cpp (written by hand: em++ 3.1.6 has no --emit-tsd).
// Keep in sync with EMSCRIPTEN_BINDINGS in bindings.cpp. Addresses are byte offsets into wasm memory.

export interface SinkhornCall {
  cost: number; n: number; p: number; a: number; b: number;
  batch: number; nMax: number; pMax: number;
  eps: number; maxIter: number; tol: number; similarity: boolean;
  plan: number; f: number; g: number; nIter: number; marginalError: number; converged: number; costValue: number;
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
