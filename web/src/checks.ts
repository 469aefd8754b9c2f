// Argument checks done on the JS side: the ones the core cannot do because it only sees pointers and numbers
// (array types and lengths, integers that Embind would silently truncate). Value checks (NaN, eps <= 0, masses)
// are left to the core so that there is one source of truth for them.
import { InductiveError } from './errors.js';

const INT32_MAX = 2 ** 31 - 1;

export function typeName(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'Array';
  if (typeof x === 'object') return (x as object).constructor?.name ?? 'object';
  return typeof x;
}

/** A count such as n, p or batch: an integer in [0, 2^31 - 1] (0 reaches the core, which names the empty set). */
export function checkCount(where: string, name: string, x: unknown): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > INT32_MAX) {
    throw new InductiveError(
      'invalid_argument',
      `${where}: ${name} must be an integer in [0, ${INT32_MAX}]: got ${show(x)}`,
    );
  }
  return x;
}

/** An optional number option; NaN and infinities pass through for the core to judge. */
export function checkNumber(where: string, name: string, x: unknown, fallback: number): number {
  if (x === undefined) return fallback;
  if (typeof x !== 'number') {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be a number: got ${typeName(x)}`);
  }
  return x;
}

/** An optional int32 option (Embind would truncate 2.5 to 2 and wrap 2^32 to 0); the core checks its range. */
export function checkInt(where: string, name: string, x: unknown, fallback: number): number {
  if (x === undefined) return fallback;
  if (typeof x !== 'number' || !Number.isInteger(x) || Math.abs(x) > INT32_MAX) {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be a 32-bit integer: got ${show(x)}`);
  }
  return x;
}

/** An optional string option; the core judges its value (and names the choices). */
export function checkString(where: string, name: string, x: unknown, fallback: string): string {
  if (x === undefined) return fallback;
  if (typeof x !== 'string') {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be a string: got ${typeName(x)}`);
  }
  return x;
}

export function checkBoolean(where: string, name: string, x: unknown, fallback: boolean): boolean {
  if (x === undefined) return fallback;
  if (typeof x !== 'boolean') {
    throw new InductiveError('invalid_argument', `${where}: ${name} must be a boolean: got ${typeName(x)}`);
  }
  return x;
}

type TypedArrayClass = Float32ArrayConstructor | Int32ArrayConstructor | Uint8ArrayConstructor;

/**
 * `x` must be an instance of `type` with `expected` elements; `shape` explains the expectation in the message
 * ("n x p = 3 x 4").
 */
export function checkArray<C extends TypedArrayClass>(
  where: string,
  name: string,
  x: unknown,
  type: C,
  expected: number,
  shape: string,
): InstanceType<C> {
  if (!(x instanceof type)) {
    const article = /^[AEIOU]/.test(type.name) ? 'an' : 'a';
    throw new InductiveError(
      'invalid_argument',
      `${where}: ${name} must be ${article} ${type.name}: got ${typeName(x)}`,
    );
  }
  if (x.length !== expected) {
    throw new InductiveError(
      'shape_mismatch',
      `${where}: ${name} has ${x.length} values; expected ${shape} = ${expected}`,
    );
  }
  return x as InstanceType<C>;
}

export function checkOptionsObject(where: string, x: unknown): void {
  if (x !== undefined && (x === null || typeof x !== 'object')) {
    throw new InductiveError('invalid_argument', `${where}: options must be an object: got ${typeName(x)}`);
  }
}

function show(x: unknown): string {
  return typeof x === 'number' ? String(x) : typeName(x);
}
