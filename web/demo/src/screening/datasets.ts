// The datasets of the "Screening" panel: two real ones vendored in data/screening (served as static assets of the
// build, `?url` imports) and a synthetic one-feature interval-regression set generated from a seed. The generator
// is a pure function, so the page (which draws the points) and the worker (which screens them) build the same set.

import digitsUrl from '../../../../data/screening/digits.csv.gz?url';
import breastCancerUrl from '../../../../data/screening/breast_cancer.csv?url';
import type { ScreeningSourceId } from '../protocol';
import { createRng } from '../rng';

export interface BuiltinSource {
  id: Exclude<ScreeningSourceId, 'file'>;
  title: string;
  /** Settings a user starts from when picking the set (the thesis' for digits). */
  defaults: {
    loss: string;
    penalty: string;
    lambda: number;
    mu: number;
    intercept: boolean;
    positive: number | null;
  };
}

export const BUILTIN_SOURCES: BuiltinSource[] = [
  {
    id: 'digits',
    title: 'Digits: 9 vs rest (1797 × 64)',
    defaults: { loss: 'squared_hinge', penalty: 'l2', lambda: 1, mu: 0, intercept: false, positive: 9 },
  },
  {
    id: 'breast-cancer',
    title: 'Breast cancer (569 × 30, standardised)',
    defaults: { loss: 'squared_hinge', penalty: 'l2', lambda: 0.01, mu: 0, intercept: true, positive: null },
  },
  {
    id: 'interval',
    title: 'Interval regression (synthetic)',
    defaults: { loss: 'interval_regression', penalty: 'l2', lambda: 0.001, mu: 0.2, intercept: true, positive: null },
  },
];

export const DIGITS_URL: string = digitsUrl;
export const BREAST_CANCER_URL: string = breastCancerUrl;

/** The synthetic set: x uniform in [-1, 1], y = SLOPE x + OFFSET + noise (normal, sd NOISE). */
export const INTERVAL_N = 120;
export const INTERVAL_SLOPE = 0.7;
export const INTERVAL_OFFSET = 0.2;
export const INTERVAL_NOISE = 0.15;

export function intervalData(seed: number): { x: Float32Array; y: Float32Array } {
  const rng = createRng(seed);
  const x = new Float32Array(INTERVAL_N);
  const y = new Float32Array(INTERVAL_N);
  for (let i = 0; i < INTERVAL_N; i++) {
    x[i] = rng.uniform(-1, 1);
    y[i] = INTERVAL_SLOPE * x[i] + INTERVAL_OFFSET + INTERVAL_NOISE * rng.normal();
  }
  return { x, y };
}

/**
 * The breast-cancer CSV (a header line, then 30 features and the label per row) as arrays, each feature
 * standardised to mean 0 and standard deviation 1: its features range from 1e-3 to 1e3, and an L2 penalty on
 * raw features would shrink the small-scale ones to nothing.
 */
export function standardisedCsv(text: string): { x: Float32Array; y: Float32Array; n: number; p: number } {
  const rows = text
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(',').map(Number));
  const n = rows.length;
  const p = (rows[0]?.length ?? 1) - 1;
  const x = new Float32Array(n * p);
  const y = new Float32Array(n);
  for (let j = 0; j < p; j++) {
    let mean = 0;
    for (const r of rows) mean += r[j] / n;
    let variance = 0;
    for (const r of rows) variance += (r[j] - mean) ** 2 / n;
    const sd = Math.sqrt(variance) || 1;
    rows.forEach((r, i) => {
      x[i * p + j] = (r[j] - mean) / sd;
    });
  }
  rows.forEach((r, i) => {
    y[i] = r[p];
  });
  return { x, y, n, p };
}

/** A file's format from its name: .csv and .csv.gz are CSV, everything else LIBSVM (svmlight). */
export function guessFormat(name: string): 'libsvm' | 'csv' {
  return /\.csv(\.gz)?$/i.test(name) ? 'csv' : 'libsvm';
}
