// The two weighted point clouds of the OT panel, in the unit square (y pointing down, as on screen).

import { createRng } from '../rng';

export interface Point {
  x: number;
  y: number;
  /** Relative mass; the clouds are normalised to probability vectors before solving. */
  w: number;
}

export interface Clouds {
  source: Point[];
  target: Point[];
}

export const N_SOURCE_DEFAULT = 24;
export const P_TARGET_DEFAULT = 30;

const clamp01 = (v: number): number => Math.min(0.97, Math.max(0.03, v));

/**
 * Source: two Gaussian blobs on the left; target: a noisy arc on the right, bulging towards them. Both clouds are
 * ordered by height so the heatmap's rows and columns follow the geometry and the plan shows as a band rather
 * than as noise.
 */
export function randomClouds(seed: number, n = N_SOURCE_DEFAULT, p = P_TARGET_DEFAULT): Clouds {
  const rng = createRng(seed);
  const weight = (): number => rng.uniform(0.4, 1.6);

  const blobs = [0, 1].map(() => ({
    x: rng.uniform(0.12, 0.32),
    y: rng.uniform(0.25, 0.75),
    sd: rng.uniform(0.06, 0.1),
  }));
  const source: Point[] = [];
  for (let i = 0; i < n; i++) {
    const blob = blobs[i % 2];
    source.push({
      x: clamp01(blob.x + blob.sd * rng.normal()),
      y: clamp01(blob.y + blob.sd * rng.normal()),
      w: weight(),
    });
  }
  source.sort((u, v) => u.y - v.y);

  // Centre on the right, points on the left-facing side of the circle: the arc bulges towards the source.
  const cx = rng.uniform(0.86, 0.94);
  const cy = rng.uniform(0.45, 0.55);
  const radius = rng.uniform(0.34, 0.4);
  const span = rng.uniform(0.55, 0.8) * Math.PI; // 100..145 degrees
  const target: Point[] = [];
  for (let j = 0; j < p; j++) {
    const angle = Math.PI + span * ((j + rng.uniform(-0.3, 0.3)) / Math.max(1, p - 1) - 0.5);
    const r = radius + 0.02 * rng.normal();
    target.push({ x: clamp01(cx + r * Math.cos(angle)), y: clamp01(cy + r * Math.sin(angle)), w: weight() });
  }
  target.sort((u, v) => u.y - v.y);
  return { source, target };
}

/** Interleaved x0, y0, x1, y1, ... as the worker protocol expects. */
export function packXy(points: readonly Point[]): Float32Array {
  const xy = new Float32Array(2 * points.length);
  points.forEach((pt, i) => {
    xy[2 * i] = pt.x;
    xy[2 * i + 1] = pt.y;
  });
  return xy;
}

/** Weights scaled to sum to 1. An empty cloud gives an empty vector (the library reports that case). */
export function normalisedWeights(points: readonly Point[]): Float32Array {
  const total = points.reduce((s, pt) => s + pt.w, 0);
  return Float32Array.from(points, (pt) => pt.w / total);
}
