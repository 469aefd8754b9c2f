// The page side of the solver worker: turns id-tagged messages into promises, and turns every way the worker
// can fail (library error, failed wasm load, crashed or unloadable worker) into a SolverError with a code.

import type { FromWorker, LibraryInfo, ResponseFor, SolveRequest, SolveResponse, ToWorker } from './protocol';

export class SolverError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'SolverError';
  }
}

export function toSolverError(err: unknown): SolverError {
  if (err instanceof SolverError) return err;
  if (err instanceof Error) return new SolverError(err.name || 'Error', err.message);
  return new SolverError('Unknown', String(err));
}

interface PendingCall {
  resolve(response: SolveResponse): void;
  reject(error: SolverError): void;
}

export class SolverClient {
  /** Resolves once the wasm is loaded; rejects with the reason it could not be. */
  readonly ready: Promise<LibraryInfo>;
  private readonly calls = new Map<number, PendingCall>();
  private nextId = 1;
  /** Set once the worker itself is unusable: later calls fail at once instead of waiting forever. */
  private broken: SolverError | null = null;

  constructor(private readonly worker: Worker) {
    let resolveReady!: (info: LibraryInfo) => void;
    let rejectReady!: (err: SolverError) => void;
    this.ready = new Promise((resolve, reject) => { resolveReady = resolve; rejectReady = reject; });

    worker.addEventListener('message', (event: MessageEvent<FromWorker>) => {
      const msg = event.data;
      switch (msg.kind) {
        case 'ready': resolveReady(msg.info); break;
        // Not "broken": requests still reach the worker, and each reports this same error with its own id.
        case 'init-error': rejectReady(new SolverError(msg.error.code, msg.error.message)); break;
        case 'result': this.settle(msg.id, (call) => call.resolve(msg.response)); break;
        case 'error': this.settle(msg.id, (call) => call.reject(new SolverError(msg.error.code, msg.error.message))); break;
      }
    });
    // A module worker that fails to load (syntax error, missing import, blocked URL) only fires a bare 'error'
    // event with no message; name the failure ourselves so the page still has something to show.
    worker.addEventListener('error', (event: ErrorEvent) => {
      const err = new SolverError('WorkerError', event.message || 'the solver worker failed to start or crashed');
      rejectReady(err);
      this.breakAll(err);
    });
    worker.addEventListener('messageerror', () => {
      this.breakAll(new SolverError('WorkerMessageError', 'a reply from the solver worker could not be deserialised'));
    });
  }

  solve<R extends SolveRequest>(request: R): Promise<ResponseFor<R>> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise<ResponseFor<R>>((resolve, reject) => {
      this.calls.set(id, { resolve: (response) => resolve(response as ResponseFor<R>), reject });
      const message: ToWorker = { id, request };
      this.worker.postMessage(message);
    });
  }

  private settle(id: number, finish: (call: PendingCall) => void): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    finish(call);
  }

  private breakAll(err: SolverError): void {
    this.broken = err;
    for (const call of this.calls.values()) call.reject(err);
    this.calls.clear();
  }
}
