// Number formatting for the result tables. Every string stays parseable by Number(), so tests (and users
// copying values) read exactly what is shown.

/** Small magnitudes (errors, deviations) in scientific notation, e.g. "3.21e-8"; exact zero as "0". */
export function formatSmall(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  return x.toExponential(2);
}

/** General values with `digits` significant digits, switching to scientific notation outside [1e-3, 1e6). */
export function formatValue(x: number, digits = 5): string {
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (x !== 0 && (abs < 1e-3 || abs >= 1e6)) return x.toExponential(digits - 1);
  return String(Number(x.toPrecision(digits)));
}

export function formatMs(ms: number): string {
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}
