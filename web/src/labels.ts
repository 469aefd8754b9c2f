// Labels of a few-labels fit (OTKE fitHead, GraphiT refitHead): class names or indices to class indices.
import { typeName } from './checks.js';
import { InductiveError } from './errors.js';

/** Class indices and class names from labels given as names or as indices (see FitHeadOptions.classes). */
export function resolveLabels(
  where: string,
  labels: unknown,
  classes: unknown,
  modelLabels: string[],
): { y: Int32Array; names: string[] } {
  if (classes !== undefined && (!Array.isArray(classes) || classes.some((c) => typeof c !== 'string'))) {
    throw new InductiveError('invalid_argument', `${where}: classes must be an array of strings`);
  }
  const given = classes as string[] | undefined;
  if (given !== undefined && new Set(given).size !== given.length) {
    throw new InductiveError('invalid_argument', `${where}: classes must be distinct: got ${JSON.stringify(given)}`);
  }
  const list: unknown[] | undefined = Array.isArray(labels)
    ? labels
    : labels instanceof Int32Array
      ? Array.from(labels)
      : undefined;
  if (list === undefined) {
    throw new InductiveError(
      'invalid_argument',
      `${where}: labels must be an array of class names or indices, or an Int32Array: got ${typeName(labels)}`,
    );
  }
  if (list.every((l) => typeof l === 'string')) {
    const strings = list as string[];
    const names =
      given ??
      (modelLabels.length > 0 && strings.every((l) => modelLabels.includes(l))
        ? modelLabels.slice()
        : [...new Set(strings)]);
    const index = new Map(names.map((n, i) => [n, i]));
    const y = Int32Array.from(strings, (l, i) => {
      const c = index.get(l);
      if (c === undefined) {
        throw new InductiveError(
          'invalid_argument',
          `${where}: label '${l}' of sample ${i} is not one of the classes ${JSON.stringify(names)}`,
        );
      }
      return c;
    });
    return { y, names };
  }
  if (list.every((l) => typeof l === 'number')) {
    const numbers = list as number[];
    numbers.forEach((l, i) => {
      if (!Number.isInteger(l) || l < 0 || l > 2 ** 31 - 1) {
        throw new InductiveError(
          'invalid_argument',
          `${where}: label of sample ${i} must be a class index (an integer >= 0): got ${l}`,
        );
      }
    });
    const top = numbers.reduce((m, l) => Math.max(m, l + 1), 0);
    const names =
      given ?? (modelLabels.length >= top ? modelLabels.slice() : Array.from({ length: top }, (_, c) => String(c)));
    // The core checks every index against the class count.
    return { y: Int32Array.from(numbers), names };
  }
  throw new InductiveError(
    'invalid_argument',
    `${where}: labels must be all class names (strings) or all class indices (numbers)`,
  );
}
