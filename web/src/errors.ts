// The one error type of the package. Every failure, from argument checks here or from the C++ core, arrives as
// an InductiveError whose `code` a caller can switch on and whose message says what was wrong and what was
// expected ("where: what: got X, expected Y").

/**
 * Stable error codes. All but `out_of_memory` are the core's (`inductive::error_code_name`); `out_of_memory` means
 * wasm memory could not grow (it is capped at 2 GiB); `cancelled` means the call's onProgress returned false.
 */
export type ErrorCodeName =
  | 'invalid_argument'
  | 'shape_mismatch'
  | 'bad_model_file'
  | 'unsupported_version'
  | 'backend'
  | 'io'
  | 'internal'
  | 'cancelled'
  | 'out_of_memory';

const CODES: ReadonlySet<string> = new Set<ErrorCodeName>([
  'invalid_argument',
  'shape_mismatch',
  'bad_model_file',
  'unsupported_version',
  'backend',
  'io',
  'internal',
  'cancelled',
  'out_of_memory',
]);

export class InductiveError extends Error {
  readonly code: ErrorCodeName;

  constructor(code: ErrorCodeName, message: string) {
    super(message);
    this.name = 'InductiveError';
    this.code = code;
  }
}

/** Maps a code name reported by the wasm side to ours; an unknown one is a bug on our side, hence `internal`. */
export function toErrorCode(name: string): ErrorCodeName {
  return CODES.has(name) ? (name as ErrorCodeName) : 'internal';
}

/** The error the wasm side recorded for the call that just reported failure. */
export function lastError(module: { lastErrorCode(): string; lastErrorMessage(): string }): InductiveError {
  return new InductiveError(toErrorCode(module.lastErrorCode()), module.lastErrorMessage());
}

/** An InductiveError for a bad argument (code `invalid_argument`). */
export function invalid(message: string): InductiveError {
  return new InductiveError('invalid_argument', message);
}

/** The JSON a wasm call returned; text that does not parse is a bug on our side (`internal`), named by `where`. */
export function parseJson<T>(text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new InductiveError('internal', `${where}: the wasm side returned invalid JSON: ${String(e)}`);
  }
}
