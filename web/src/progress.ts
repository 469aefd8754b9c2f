// Progress reports of long calls, and how a caller stops them. One shape for every long call of the package:
// `onProgress(stage, fraction)`; returning `false` cancels the call, which then throws InductiveError('cancelled')
// and leaves every model and dataset it was given as it was (the core unwinds; nothing half-made is kept).
import { typeName } from './checks.js';
import { InductiveError } from './errors.js';

/**
 * Called with a stage name and the fraction of it done (0..1); see each method for its stages. Return `false` to
 * cancel the call (it throws InductiveError with code `cancelled`; any other value goes on); an exception it
 * throws cancels it too and is rethrown once the call has stopped.
 */
export type ProgressCallback = (stage: string, fraction: number) => unknown;

/** Reports progress from a JS loop; throws InductiveError('cancelled') when the callback asks to stop. */
export function reportProgress(
  where: string,
  onProgress: ProgressCallback | undefined,
  stage: string,
  fraction: number,
): void {
  if (onProgress !== undefined && onProgress(stage, fraction) === false) {
    throw new InductiveError('cancelled', `${where}: cancelled`);
  }
}

/** Checks an onProgress option: a function or undefined. */
export function checkProgress(where: string, onProgress: unknown): ProgressCallback | undefined {
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new InductiveError(
      'invalid_argument',
      `${where}: onProgress must be a function: got ${typeName(onProgress)}`,
    );
  }
  return onProgress as ProgressCallback | undefined;
}

/**
 * A user callback as wasm may call it: it never throws into C++ frames (nothing there would be cleaned up). It
 * returns false, which makes the core stop (the call fails with code `cancelled`, or the solver keeps its certified
 * iterate), when the user callback returned false or threw; `rethrow()` then throws what it threw, once the call
 * has returned. Every callback the package hands to wasm goes through this.
 */
export function guardedCallback<A extends unknown[]>(
  call: ((...args: A) => unknown) | undefined,
): {
  callback: ((...args: A) => boolean) | undefined;
  rethrow(): void;
} {
  if (call === undefined) return { callback: undefined, rethrow: () => {} };
  let failure: { error: unknown } | null = null;
  return {
    callback: (...args: A) => {
      if (failure !== null) return false;
      try {
        return call(...args) !== false;
      } catch (error) {
        failure = { error };
        return false;
      }
    },
    rethrow: () => {
      if (failure !== null) throw failure.error;
    },
  };
}

/** An onProgress option (checked) as the callback handed to wasm (guardedCallback). */
export function safeProgress(
  where: string,
  onProgress: unknown,
): {
  callback: ((stage: string, fraction: number) => boolean) | undefined;
  rethrow(): void;
} {
  return guardedCallback(checkProgress(where, onProgress));
}
