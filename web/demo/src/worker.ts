// The solver worker: owns the one wasm instance of the page and runs every computation, so the UI thread never
// blocks on Sinkhorn however small eps gets. Requests are answered one by one, each with its own id. The OTKE
// panel's requests (and its models) are handled in otke/worker_otke.ts, the screening panel's (and its datasets)
// in screening/worker_screening.ts, the GraphiT panel's (and its model) in graphit/worker_graphit.ts.

import { init, InductiveError, type Inductive, type ProgressCallback } from 'inductive';
import type { ErrorInfo, FromWorker, OtRequest, OtResponse, SolveRequest, SolveResponse, ToWorker } from './protocol';
import { squaredDistances } from './ot/cost';
import { graphitTransferables, solveGraphit } from './graphit/worker_graphit';
import { otkeTransferables, solveOtke } from './otke/worker_otke';
import { screeningTransferables, solveScreening } from './screening/worker_screening';

function post(message: FromWorker, transfer: Transferable[] = []): void {
  self.postMessage(message, { transfer });
}

function toErrorInfo(err: unknown): ErrorInfo {
  // The library's own failures keep their code (InvalidArgument, ShapeMismatch, ...). Anything else is a bug
  // or an environment problem; its JS error name (TypeError, CompileError, ...) is the most honest code we have.
  if (err instanceof InductiveError) return { code: err.code, message: err.message };
  if (err instanceof Error) return { code: err.name || 'Error', message: err.message };
  return { code: 'Unknown', message: String(err) };
}

// The wasm is located relative to the package's own module URL; Vite emits it next to this worker's bundle.
const library: Promise<Inductive> = init();
library.then(
  (ind) =>
    post({
      kind: 'ready',
      info: { version: ind.version, simd: ind.simd, threads: ind.threads, threadsNote: ind.threadsNote },
    }),
  (err: unknown) => post({ kind: 'init-error', error: toErrorInfo(err) }),
);

function solveOt(ind: Inductive, req: OtRequest): OtResponse {
  const n = req.sourceXy.length / 2;
  const p = req.targetXy.length / 2;
  const cost = squaredDistances(req.sourceXy, req.targetXy);
  // Empty clouds and bad eps/tol/maxIter go through unchanged on purpose: the library is the one validator,
  // and the page shows whatever it reports.
  const start = performance.now();
  const res = ind.sinkhorn(cost, n, p, { a: req.a, b: req.b, eps: req.eps, maxIter: req.maxIter, tol: req.tol });
  const computeMs = performance.now() - start;
  // The library reports <P, C> - eps H(P), which grows as eps shrinks; <P, C> alone is the cost a user reads
  // the plan by, so it is computed here too (in float64, one pass over the plan).
  let transportCost = 0;
  for (let k = 0; k < cost.length; k++) transportCost += res.plan[k] * cost[k];
  return {
    method: 'ot',
    n: res.n,
    p: res.p,
    // Transferring detaches the buffer: a private copy means that never depends on whether the library's
    // output arrays share one.
    plan: res.plan.slice(),
    nIter: res.nIter,
    marginalError: res.marginalError,
    converged: res.converged,
    regularisedCost: res.cost,
    transportCost,
    computeMs,
  };
}

/**
 * The progress callback of request `id`: reports to the page (at most every 50 ms, and every stage's start and
 * end) and returns false, which makes the library stop the call, once the page has set the request's cancel flag.
 */
function progressFor(id: number, cancel: Int32Array | undefined): ProgressCallback {
  let lastStage = '';
  let lastPost = 0;
  return (stage, fraction) => {
    const now = performance.now();
    if (stage !== lastStage || fraction >= 1 || now - lastPost > 50) {
      post({ kind: 'progress', id, stage, fraction });
      lastStage = stage;
      lastPost = now;
    }
    return cancel === undefined || Atomics.load(cancel, 0) === 0;
  };
}

function solve(
  ind: Inductive,
  request: SolveRequest,
  progress: ProgressCallback,
): SolveResponse | Promise<SolveResponse> {
  switch (request.method) {
    case 'ot':
      return solveOt(ind, request);
    case 'otke-info':
    case 'otke-analyse':
    case 'otke-fit-head':
    case 'otke-learn':
    case 'otke-reset-head':
    case 'otke-save':
    case 'otke-open':
      return solveOtke(ind, request, progress);
    case 'screening-load-file':
    case 'screening-run':
    case 'screening-path':
    case 'screening-compress':
      return solveScreening(ind, request, progress);
    case 'graphit-info':
    case 'graphit-analyse':
    case 'graphit-examples':
    case 'graphit-refit':
    case 'graphit-reset':
    case 'graphit-save':
      return solveGraphit(ind, request, progress);
    default: {
      // Reached only if a panel sends a method this worker does not know yet (the page and worker disagree).
      const unknown: { method: string } = request;
      throw new Error(`worker: unknown method '${unknown.method}'`);
    }
  }
}

/** Output buffers handed to the page without a copy (each response owns its arrays). */
function transferables(response: SolveResponse): Transferable[] {
  switch (response.method) {
    case 'ot':
      return [response.plan.buffer as ArrayBuffer];
    case 'screening-load-file':
    case 'screening-run':
    case 'screening-path':
    case 'screening-compress':
      return screeningTransferables(response);
    case 'graphit-info':
    case 'graphit-analyse':
    case 'graphit-examples':
    case 'graphit-refit':
    case 'graphit-reset':
    case 'graphit-save':
      return graphitTransferables(response);
    default:
      return otkeTransferables(response);
  }
}

self.addEventListener('message', async (event: MessageEvent<ToWorker>) => {
  const { id, request, cancel } = event.data;
  try {
    const response = await solve(await library, request, progressFor(id, cancel));
    post({ kind: 'result', id, response }, transferables(response));
  } catch (err) {
    post({ kind: 'error', id, error: toErrorInfo(err) });
  }
});
