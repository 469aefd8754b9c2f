// Independent check of a returned plan: its row sums must match a and its column sums b. Computed here, from the
// plan the page received, rather than trusted from the solver's own marginalError, so the page verifies the
// whole path (wasm -> worker -> transfer -> page) and a test can read the result off the screen.

export interface MarginalCheck {
  rowSums: Float64Array;
  colSums: Float64Array;
  /** max_i |sum_j P_ij - a_i| */
  rowDeviation: number;
  /** max_j |sum_i P_ij - b_j| */
  colDeviation: number;
  /** sum_ij P_ij (1 for a valid plan between probability vectors). */
  mass: number;
}

export function checkMarginals(
  plan: Float32Array,
  n: number,
  p: number,
  a: Float32Array,
  b: Float32Array,
): MarginalCheck {
  // Float64 accumulation: the deviations we report are ~1e-7, the size of float32 rounding in the sums themselves.
  const rowSums = new Float64Array(n);
  const colSums = new Float64Array(p);
  for (let i = 0; i < n; i++) {
    let row = 0;
    for (let j = 0; j < p; j++) {
      const v = plan[i * p + j];
      row += v;
      colSums[j] += v;
    }
    rowSums[i] = row;
  }
  let rowDeviation = 0;
  let colDeviation = 0;
  let mass = 0;
  for (let i = 0; i < n; i++) {
    rowDeviation = Math.max(rowDeviation, Math.abs(rowSums[i] - a[i]));
    mass += rowSums[i];
  }
  for (let j = 0; j < p; j++) colDeviation = Math.max(colDeviation, Math.abs(colSums[j] - b[j]));
  // NaN anywhere must not read as "0 deviation": Math.max(0, NaN) is NaN, which is what we want to show.
  return { rowSums, colSums, rowDeviation, colDeviation, mass };
}
