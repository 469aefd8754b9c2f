// (c) A strict TypeScript project type-checked against the shipped .d.ts only (no @types/node, no sources).
// The @ts-expect-error lines fail the check if the types were too loose (e.g. `any`) to catch the mistake.
import {
  init,
  InductiveError,
  type ErrorCodeName,
  type Inductive,
  type OtkeModel,
  type SinkhornResult,
  type GraphitModel,
  type ScreeningDataset,
  type ScreenResult,
} from 'inductive';

export async function main(modelBytes: Uint8Array, graphBytes: Uint8Array, libsvm: string): Promise<number> {
  const ind: Inductive = await init({ wasmUrl: '/assets/inductive.wasm' });
  const r: SinkhornResult = ind.sinkhorn(new Float32Array(4), 2, 2, { eps: 0.5, maxIter: 10 });
  const plan: Float32Array = r.plan;
  const converged: boolean = r.converged;

  const model: OtkeModel = ind.loadOtkeModel(modelBytes);
  const probabilities: Float32Array = model.predict(['ACGT']).probabilities;
  const labels: string[] = model.labels;
  model.dispose();

  const g: GraphitModel = ind.loadGraphitModel(graphBytes);
  g.dispose();
  const data: ScreeningDataset = ind.loadDataset(libsvm, { format: 'libsvm' });
  const s: ScreenResult = data.screen({ loss: 'squared_hinge', lambda: 0.1 });
  const fraction: number = s.fractionScreened;
  data.dispose();

  try {
    ind.sinkhorn(new Float32Array(3), 2, 2);
  } catch (e) {
    if (e instanceof InductiveError) {
      const code: ErrorCodeName = e.code;
      return code.length;
    }
  }
  // @ts-expect-error: the cost must be a Float32Array
  ind.sinkhorn([0, 1, 1, 0], 2, 2);
  // @ts-expect-error: no such option
  ind.sinkhorn(plan, 2, 2, { epsilon: 0.5 });
  // @ts-expect-error: error codes are a closed set
  const wrong: ErrorCodeName = 'no_such_code';
  // @ts-expect-error: screening losses are a closed set
  data.screen({ loss: 'hinge-ish', lambda: 0.1 });
  return plan.length + probabilities.length + labels.length + fraction + Number(converged) + wrong.length;
}
