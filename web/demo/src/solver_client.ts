// The page side of the solver worker: turns id-tagged messages into promises, and turns every way the worker
// can fail (library error, failed wasm load, crashed or unloadable worker) into a SolverError with a code.
//
// Long calls report progress and can be cancelled. On a cross-origin isolated page (the demo's servers send
// COOP/COEP) a call gets a cancel flag in shared memory that the worker's progress callback reads: cancelling then
// stops the library call itself, and the worker keeps its models. Elsewhere (no SharedArrayBuffer) the only way
// to stop a synchronous wasm call is to stop its thread: the worker is terminated and a fresh one started, which
// reloads the committed models on first use (whatever was learnt in the page is lost, and the panels say so).

import type { FromWorker, LibraryInfo, ResponseFor, SolveRequest, SolveResponse, ToWorker } from './protocol';

export class SolverError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SolverError';
  }
}

export function toSolverError(err: unknown): SolverError {
  if (err instanceof SolverError) return err;
  if (err instanceof Error) return new SolverError(err.name || 'Error', err.message);
  return new SolverError('Unknown', String(err));
}

export interface SolveOptions {
  /** Progress of the library call in the worker (stage names as the library reports them). */
  onProgress?: (stage: string, fraction: number) => void;
  /** Aborting it cancels the call: it rejects with a SolverError whose code is 'cancelled'. */
  signal?: AbortSignal;
  /** Buffers of the request handed to the worker instead of copied (a dropped 200 MB file: no main-thread copy). */
  transfer?: Transferable[];
}

interface PendingCall {
  resolve(response: SolveResponse): void;
  reject(error: SolverError): void;
  onProgress?: (stage: string, fraction: number) => void;
}

/** How a cancel reaches the worker: through shared memory, or (without it) by restarting the worker. */
export type CancelMode = 'shared-memory' | 'restart-worker';

export class SolverClient {
  /** Resolves once the wasm is loaded; rejects with the reason it could not be. */
  readonly ready: Promise<LibraryInfo>;
  readonly cancelMode: CancelMode =
    typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true
      ? 'shared-memory'
      : 'restart-worker';
  private readonly restartListeners: (() => void)[] = [];
  private readonly calls = new Map<number, PendingCall>();
  private nextId = 1;
  /** Set once the worker itself is unusable: later calls fail at once instead of waiting forever. */
  private broken: SolverError | null = null;
  private worker!: Worker;
  private resolveReady!: (info: LibraryInfo) => void;
  private rejectReady!: (err: SolverError) => void;

  constructor(private readonly startWorker: () => Worker) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.attach(startWorker());
  }

  solve<R extends SolveRequest>(request: R, options: SolveOptions = {}): Promise<ResponseFor<R>> {
    if (this.broken) return Promise.reject(this.broken);
    if (options.signal?.aborted) return Promise.reject(cancelled());
    const id = this.nextId++;
    const cancel =
      this.cancelMode === 'shared-memory' && options.signal ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    return new Promise<ResponseFor<R>>((resolve, reject) => {
      this.calls.set(id, {
        resolve: (response) => resolve(response as ResponseFor<R>),
        reject,
        onProgress: options.onProgress,
      });
      options.signal?.addEventListener(
        'abort',
        () => {
          if (!this.calls.has(id)) return;
          if (cancel) Atomics.store(cancel, 0, 1);
          else this.restart(id);
        },
        { once: true },
      );
      const message: ToWorker = cancel ? { id, request, cancel } : { id, request };
      this.worker.postMessage(message, options.transfer ?? []);
    });
  }

  /** `listener` runs after a cancel restarted the worker (the models it held were dropped). */
  onRestart(listener: () => void): void {
    this.restartListeners.push(listener);
  }

  private attach(worker: Worker): void {
    this.worker = worker;
    worker.addEventListener('message', (event: MessageEvent<FromWorker>) => {
      if (worker !== this.worker) return;
      const msg = event.data;
      switch (msg.kind) {
        case 'ready':
          this.resolveReady(msg.info);
          break;
        // Not "broken": requests still reach the worker, and each reports this same error with its own id.
        case 'init-error':
          this.rejectReady(new SolverError(msg.error.code, msg.error.message));
          break;
        case 'progress':
          this.calls.get(msg.id)?.onProgress?.(msg.stage, msg.fraction);
          break;
        case 'result':
          this.settle(msg.id, (call) => call.resolve(msg.response));
          break;
        case 'error':
          this.settle(msg.id, (call) => call.reject(new SolverError(msg.error.code, msg.error.message)));
          break;
      }
    });
    // A module worker that fails to load (syntax error, missing import, blocked URL) only fires a bare 'error'
    // event with no message; name the failure ourselves so the page still has something to show.
    worker.addEventListener('error', (event: ErrorEvent) => {
      if (worker !== this.worker) return;
      const err = new SolverError('WorkerError', event.message || 'the solver worker failed to start or crashed');
      this.rejectReady(err);
      this.breakAll(err);
    });
    worker.addEventListener('messageerror', () => {
      if (worker !== this.worker) return;
      this.breakAll(new SolverError('WorkerMessageError', 'a reply from the solver worker could not be deserialised'));
    });
  }

  // Cancels call `id` the only way a page without shared memory can: a new worker replaces the busy one. The
  // other calls in flight fail too (their worker is gone), with a message that says why.
  private restart(id: number): void {
    this.worker.terminate();
    const calls = [...this.calls.entries()];
    this.calls.clear();
    for (const [other, call] of calls) {
      call.reject(
        other === id
          ? cancelled()
          : new SolverError('cancelled', 'stopped: another computation was cancelled and the worker restarted'),
      );
    }
    this.attach(this.startWorker());
    for (const listener of this.restartListeners) listener();
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

function cancelled(): SolverError {
  return new SolverError('cancelled', 'cancelled');
}
