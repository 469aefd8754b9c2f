// An independent oracle: log-domain Sinkhorn in plain JS, float64 throughout, written for obviousness rather
// than speed. Same iteration order as POT's sinkhorn_log (and the core): from F = G = 0, each iteration sets
//   G_j = log b_j - LSE_i(F_i + K_ij),  then  F_i = log a_i - LSE_j(G_j + K_ij),   K = -C/eps (or S/eps),
// and the plan is P_ij = exp(F_i + G_j + K_ij), the potentials f = eps F, g = eps G.

export interface ReferenceProblem {
  cost: ArrayLike<number>; // n x p row-major
  n: number;
  p: number;
  a?: ArrayLike<number>;
  b?: ArrayLike<number>;
  eps: number;
  iterations: number;
  similarity?: boolean;
}

export interface ReferenceSolution {
  plan: Float64Array;
  f: Float64Array;
  g: Float64Array;
  marginalError: number;
  cost: number; // <P, C> - eps H(P), H(P) = -sum P (log P - 1)
}

function logSumExp(values: number[]): number {
  const m = Math.max(...values);
  if (m === -Infinity) return -Infinity;
  return m + Math.log(values.reduce((s, v) => s + Math.exp(v - m), 0));
}

export function referenceSinkhorn(pr: ReferenceProblem): ReferenceSolution {
  const { n, p, eps } = pr;
  const at = (w: ArrayLike<number>, i: number): number => w[i] ?? NaN;
  const a = Array.from({ length: n }, (_, i) => (pr.a ? at(pr.a, i) : 1 / n));
  const b = Array.from({ length: p }, (_, j) => (pr.b ? at(pr.b, j) : 1 / p));
  const sign = pr.similarity ? 1 : -1;
  const K = (i: number, j: number): number => (sign * at(pr.cost, i * p + j)) / eps;
  const F = new Float64Array(n);
  const G = new Float64Array(p);
  for (let t = 0; t < pr.iterations; ++t) {
    for (let j = 0; j < p; ++j) {
      G[j] = Math.log(at(b, j)) - logSumExp(Array.from({ length: n }, (_, i) => at(F, i) + K(i, j)));
    }
    for (let i = 0; i < n; ++i) {
      F[i] = Math.log(at(a, i)) - logSumExp(Array.from({ length: p }, (_, j) => at(G, j) + K(i, j)));
    }
  }
  const plan = new Float64Array(n * p);
  let value = 0;
  for (let i = 0; i < n; ++i) {
    for (let j = 0; j < p; ++j) {
      const logP = at(F, i) + at(G, j) + K(i, j);
      const P = Math.exp(logP);
      plan[i * p + j] = P;
      value += P * (-sign * at(pr.cost, i * p + j)) + eps * P * (logP - 1);
    }
  }
  return {
    plan,
    f: F.map((x) => eps * x),
    g: G.map((x) => eps * x),
    marginalError: marginalError(plan, n, p, a, b),
    cost: value,
  };
}

/** ||P 1 - a||_1 + ||P^T 1 - b||_1, in float64. */
export function marginalError(
  plan: ArrayLike<number>,
  n: number,
  p: number,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
): number {
  const { rows, cols } = sums(plan, n, p);
  let err = 0;
  for (let i = 0; i < n; ++i) err += Math.abs((rows[i] ?? 0) - (a[i] ?? 0));
  for (let j = 0; j < p; ++j) err += Math.abs((cols[j] ?? 0) - (b[j] ?? 0));
  return err;
}

export function sums(plan: ArrayLike<number>, n: number, p: number): { rows: Float64Array; cols: Float64Array } {
  const rows = new Float64Array(n);
  const cols = new Float64Array(p);
  for (let i = 0; i < n; ++i) {
    for (let j = 0; j < p; ++j) {
      const v = plan[i * p + j] ?? 0;
      rows[i] = (rows[i] ?? 0) + v;
      cols[j] = (cols[j] ?? 0) + v;
    }
  }
  return { rows, cols };
}
