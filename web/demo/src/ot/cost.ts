// Ground cost for the OT panel: squared Euclidean distance between points of the unit square, so costs lie in
// [0, 2] and the eps slider (0.001..10) spans "almost unregularised" to "almost uniform plan".

/** Row-major n × p matrix C[i, j] = |x_i - y_j|^2 from interleaved (x, y) coordinates. */
export function squaredDistances(sourceXy: Float32Array, targetXy: Float32Array): Float32Array {
  const n = sourceXy.length / 2;
  const p = targetXy.length / 2;
  const cost = new Float32Array(n * p);
  for (let i = 0; i < n; i++) {
    const xi = sourceXy[2 * i];
    const yi = sourceXy[2 * i + 1];
    const row = i * p;
    for (let j = 0; j < p; j++) {
      const dx = xi - targetXy[2 * j];
      const dy = yi - targetXy[2 * j + 1];
      cost[row + j] = dx * dx + dy * dy;
    }
  }
  return cost;
}
