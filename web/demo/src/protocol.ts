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

/** Add more methods here as panels are added: the union keeps the worker's dispatch exhaustive. */
export type SolveRequest = OtRequest;
export type SolveResponse = OtResponse;
export type ResponseFor<R extends SolveRequest> = Extract<SolveResponse, { method: R['method'] }>;

export interface LibraryInfo {
  version: string;
  simd: string;
}

/** What crosses the worker boundary for any failure: an InductiveError keeps its code. */
export interface ErrorInfo {
  code: string;
  message: string;
}

export type ToWorker = { id: number; request: SolveRequest };

export type FromWorker =
  | { kind: 'ready'; info: LibraryInfo }
  | { kind: 'init-error'; error: ErrorInfo }
  | { kind: 'result'; id: number; response: SolveResponse }
  | { kind: 'error'; id: number; error: ErrorInfo };
