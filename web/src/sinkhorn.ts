// Entropic optimal transport by log-domain Sinkhorn (core: inductive::sinkhorn_log<float>, see
// core/include/inductive/sinkhorn.h for the maths and the iteration order, which follows POT's sinkhorn_log).
import type { InductiveModule } from '../wasm/inductive.mjs';
import { checkArray, checkBoolean, checkCount, checkInt, checkNumber, checkOptionsObject, typeName } from './checks.js';
import { optionDefaults } from './defaults.js';
import { InductiveError, lastError } from './errors.js';
import { withBlock, type Slot } from './heap.js';

export interface SinkhornOptions {
  /** Row marginal: n weights (batch: batch x nMax, padding ignored). Default uniform 1/n. */
  a?: Float32Array;
  /** Column marginal: p weights (batch: batch x pMax). Default uniform 1/p. Must have the mass of `a`. */
  b?: Float32Array;
  /** Entropic regularisation, > 0, in the units of the cost. Default 0.5. */
  eps?: number;
  /** Iterations; exactly this many when tol is 0. Default 100. */
  maxIter?: number;
  /** > 0: stop early once the L1 column-marginal error is <= tol. Default 0. */
  tol?: number;
  /** The matrix holds similarities S and the cost is -S. Default false. */
  similarity?: boolean;
}

/** The solution of one problem. `plan` is n x p row-major; f (n) and g (p) are the dual potentials. */
export interface SinkhornResult {
  n: number;
  p: number;
  plan: Float32Array;
  f: Float32Array;
  g: Float32Array;
  nIter: number;
  /** ||P 1 - a||_1 + ||P^T 1 - b||_1 of the returned plan. */
  marginalError: number;
  /** marginalError <= tol (or <= 1e-4 x mass when tol is 0). */
  converged: boolean;
  /** The regularised OT cost <P, C> - eps H(P). */
  cost: number;
}

/**
 * A batch of problems padded to nMax x pMax: problem b's cost is at `cost[(b * nMax + i) * pMax + j]`, its
 * true sizes are n[b] <= nMax and p[b] <= pMax (default: full). Padding is never read.
 */
export interface SinkhornBatchShape {
  batch: number;
  nMax: number;
  pMax: number;
  n?: Int32Array;
  p?: Int32Array;
}

/** Outputs in the padded layout of the input (padding written as 0); one scalar per problem otherwise. */
export interface SinkhornBatchResult {
  plan: Float32Array; // [batch, nMax, pMax]
  f: Float32Array; // [batch, nMax]
  g: Float32Array; // [batch, pMax]
  nIter: Int32Array; // [batch]
  marginalError: Float32Array; // [batch]
  converged: Uint8Array; // [batch], 1 or 0
  cost: Float32Array; // [batch]
}

// Slots of the wasm block used by one call, in this order.
const S = {
  Cost: 0,
  N: 1,
  P: 2,
  A: 3,
  B: 4,
  Plan: 5,
  F: 6,
  G: 7,
  NIter: 8,
  MarginalError: 9,
  Converged: 10,
  CostValue: 11,
} as const;
type SlotIndex = (typeof S)[keyof typeof S];

interface Numeric {
  eps: number;
  maxIter: number;
  tol: number;
  similarity: boolean;
}

export function sinkhornOne(
  module: InductiveModule,
  cost: unknown,
  n: unknown,
  p: unknown,
  options: SinkhornOptions | undefined,
): SinkhornResult {
  const where = 'sinkhorn';
  checkOptionsObject(where, options);
  const rows = checkCount(where, 'n', n);
  const cols = checkCount(where, 'p', p);
  const c = checkArray(where, 'cost', cost, Float32Array, rows * cols, `n x p = ${rows} x ${cols}`);
  const a = options?.a === undefined ? undefined : checkArray(where, 'a', options.a, Float32Array, rows, 'n');
  const b = options?.b === undefined ? undefined : checkArray(where, 'b', options.b, Float32Array, cols, 'p');
  const r = solve(module, where, c, { batch: 1, nMax: rows, pMax: cols }, a, b, numeric(module, where, options));
  return {
    n: rows,
    p: cols,
    plan: r.plan,
    f: r.f,
    g: r.g,
    nIter: r.nIter[0] ?? 0,
    marginalError: r.marginalError[0] ?? 0,
    converged: r.converged[0] === 1,
    cost: r.cost[0] ?? 0,
  };
}

export function sinkhornBatch(
  module: InductiveModule,
  cost: unknown,
  shape: SinkhornBatchShape,
  options: SinkhornOptions | undefined,
): SinkhornBatchResult {
  const where = 'sinkhornBatch';
  if (shape === null || typeof shape !== 'object') {
    throw new InductiveError(
      'invalid_argument',
      `${where}: shape must be an object { batch, nMax, pMax, n?, p? }: got ${typeName(shape)}`,
    );
  }
  checkOptionsObject(where, options);
  const batch = checkCount(where, 'batch', shape.batch);
  const nMax = checkCount(where, 'nMax', shape.nMax);
  const pMax = checkCount(where, 'pMax', shape.pMax);
  const dims = `batch x nMax x pMax = ${batch} x ${nMax} x ${pMax}`;
  const c = checkArray(where, 'cost', cost, Float32Array, batch * nMax * pMax, dims);
  const n = shape.n === undefined ? undefined : checkArray(where, 'n', shape.n, Int32Array, batch, 'batch');
  const p = shape.p === undefined ? undefined : checkArray(where, 'p', shape.p, Int32Array, batch, 'batch');
  const a =
    options?.a === undefined
      ? undefined
      : checkArray(where, 'a', options.a, Float32Array, batch * nMax, `batch x nMax = ${batch} x ${nMax}`);
  const b =
    options?.b === undefined
      ? undefined
      : checkArray(where, 'b', options.b, Float32Array, batch * pMax, `batch x pMax = ${batch} x ${pMax}`);
  return solve(module, where, c, { batch, nMax, pMax, n, p }, a, b, numeric(module, where, options));
}

function numeric(module: InductiveModule, where: string, o: SinkhornOptions | undefined): Numeric {
  const d = optionDefaults(module).sinkhorn;
  return {
    eps: checkNumber(where, 'eps', o?.eps, d.eps),
    maxIter: checkInt(where, 'maxIter', o?.maxIter, d.maxIter),
    tol: checkNumber(where, 'tol', o?.tol, d.tol),
    similarity: checkBoolean(where, 'similarity', o?.similarity, d.similarity),
  };
}

// Copies the checked inputs into one wasm block, solves in place, and copies every output out once.
function solve(
  module: InductiveModule,
  where: string,
  cost: Float32Array,
  shape: SinkhornBatchShape,
  a: Float32Array | undefined,
  b: Float32Array | undefined,
  o: Numeric,
): SinkhornBatchResult {
  const { batch, nMax, pMax } = shape;
  const size = batch * nMax * pMax;
  // Absent optional inputs get length-0 slots, i.e. address 0, which the core reads as "not given".
  const slots: Slot[] = [
    { type: 'f32', length: size },
    { type: 'i32', length: shape.n ? batch : 0 },
    { type: 'i32', length: shape.p ? batch : 0 },
    { type: 'f32', length: a ? batch * nMax : 0 },
    { type: 'f32', length: b ? batch * pMax : 0 },
    { type: 'f32', length: size },
    { type: 'f32', length: batch * nMax },
    { type: 'f32', length: batch * pMax },
    { type: 'i32', length: batch },
    { type: 'f32', length: batch },
    { type: 'u8', length: batch },
    { type: 'f32', length: batch },
  ];
  return withBlock(module, slots, where, (block) => {
    block.write(S.Cost, cost);
    if (shape.n) block.write(S.N, shape.n);
    if (shape.p) block.write(S.P, shape.p);
    if (a) block.write(S.A, a);
    if (b) block.write(S.B, b);
    const at = (s: SlotIndex): number => block.addresses[s] ?? 0;
    const ok = module.sinkhornBatch({
      cost: at(S.Cost),
      n: at(S.N),
      p: at(S.P),
      a: at(S.A),
      b: at(S.B),
      batch,
      nMax,
      pMax,
      eps: o.eps,
      maxIter: o.maxIter,
      tol: o.tol,
      similarity: o.similarity,
      plan: at(S.Plan),
      f: at(S.F),
      g: at(S.G),
      nIter: at(S.NIter),
      marginalError: at(S.MarginalError),
      converged: at(S.Converged),
      costValue: at(S.CostValue),
    });
    if (!ok) throw lastError(module);
    return {
      plan: block.readF32(S.Plan),
      f: block.readF32(S.F),
      g: block.readF32(S.G),
      nIter: block.readI32(S.NIter),
      marginalError: block.readF32(S.MarginalError),
      converged: block.readU8(S.Converged),
      cost: block.readF32(S.CostValue),
    };
  });
}
