// The one lifecycle of every object that owns wasm memory (OtkeModel, GraphitModel, ScreeningDataset): an Embind
// handle freed by dispose() (idempotent; `using` calls it through Symbol.dispose), by the garbage collector when
// never disposed (FinalizationRegistry, where it exists), and never while one of the object's own calls runs: a
// dispose() from an onProgress callback frees the memory when that call returns, so the call never reads freed memory.
import { InductiveError } from './errors.js';

/** What Embind gives for a bound C++ object. */
export interface EmbindHandle {
  delete(): void;
  isDeleted(): boolean;
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<EmbindHandle>((handle) => {
        if (!handle.isDeleted()) handle.delete();
      })
    : undefined;

/**
 * Hands a fresh Embind handle to `build`, which fills it and wraps it in its WasmObject. When anything throws before
 * the wrapper owns the handle (a bad file, a cancelled fit), the handle is deleted: no failed call leaks wasm memory.
 */
export function adoptHandle<H extends EmbindHandle, T>(handle: H, build: (handle: H) => T): T {
  try {
    return build(handle);
  } catch (e) {
    if (!handle.isDeleted()) handle.delete();
    throw e;
  }
}

export abstract class WasmObject<H extends EmbindHandle> {
  #handle: H | null;
  #calls = 0; // calls of this object running now (a callback may start another)
  readonly #kind: string;

  /** @internal `kind` names the class in messages ("OtkeModel"). */
  protected constructor(handle: H, kind: string) {
    this.#handle = handle;
    this.#kind = kind;
    registry?.register(this, handle, this);
  }

  /** Frees the wasm memory; later calls throw InductiveError('backend'). Idempotent. */
  dispose(): void {
    if (this.#handle === null) return;
    registry?.unregister(this);
    if (this.#calls === 0) this.#handle.delete();
    this.#handle = null;
  }

  /** Whether dispose() was called. */
  get disposed(): boolean {
    return this.#handle === null;
  }

  /** The handle for a call that gives no callback a chance to dispose of this object. */
  protected live(where: string): H {
    if (this.#handle === null) {
      throw new InductiveError('backend', `${where}: this ${this.#kind} was disposed; load it again`);
    }
    return this.#handle;
  }

  /**
   * Runs a call that reports progress: a dispose() from its callbacks is honoured when the call returns. With
   * `exclusive`, a second call started from those callbacks is refused (the object is mid-update).
   */
  protected use<T>(where: string, body: (handle: H) => T, exclusive?: string): T {
    const handle = this.live(where);
    if (exclusive !== undefined && this.#calls > 0) {
      throw new InductiveError(
        'invalid_argument',
        `${where}: this ${this.#kind} is already ${exclusive} (called from onProgress?)`,
      );
    }
    this.#calls++;
    try {
      return body(handle);
    } finally {
      this.#calls--;
      if (this.#calls === 0 && this.#handle === null && !handle.isDeleted()) handle.delete();
    }
  }
}

// `using x = ...` where the runtime has explicit resource management.
const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
if (disposeSymbol !== undefined) {
  Object.defineProperty(WasmObject.prototype, disposeSymbol, {
    value(this: WasmObject<EmbindHandle>): void {
      this.dispose();
    },
  });
}
