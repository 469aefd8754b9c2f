// inductive: optimal transport and model files from a C++17 core compiled to WebAssembly SIMD.
//
//   import { init } from 'inductive';
//   const ind = await init();
//   const { plan } = ind.sinkhorn(cost, n, p, { eps: 0.5 });
//   const model = ind.loadOtkeModel(bytes);  const { probabilities } = model.predict(['ACGT...']);
//   const data = ind.loadDataset(text, { format: 'libsvm' });  const { kept } = data.screen({ lambda: 0.1 });
//   const g = ind.loadGraphitModel(bytes);  const { layers, meanSaliency } = g.attention('O=[N+]([O-])c1ccccc1');
export { init, type Inductive, type Limits } from './inductive.js';
export type { InitOptions } from './load.js';
export { relaxedSimdSupported, type SimdLevel } from './simd.js';
export type { OptionDefaults } from './defaults.js';
export { InductiveError, type ErrorCodeName } from './errors.js';
export type { SinkhornOptions, SinkhornResult, SinkhornBatchShape, SinkhornBatchResult } from './sinkhorn.js';
export type { ModelInfo, TensorInfo } from './model-info.js';
export type { FastaRecords, TextSamples, TextSamplesOptions } from './text.js';
export {
  OtkeModel,
  type OtkeConfig,
  type OtkeEmbeddings,
  type OtkeTransportPlans,
  type OtkePrediction,
  type SetShape,
  type EmbedOptions,
  type FitHeadOptions,
  type HeadFitReport,
  type ProgressCallback,
} from './otke.js';
export type { OtkeFitOptions, OtkeSets } from './otke-fit.js';
export {
  ScreeningDataset,
  type PathOptions as ScreeningPathOptions,
  type PathPoint,
  type PathResult,
  type LoadDatasetOptions,
  type ScreenOptions,
  type ScreenProgress,
  type ScreenResult,
  type ScreenHistory,
  type ScreeningLoss,
  type ScreeningPenalty,
  type KernelOptions,
  type KernelReport,
  type CompressionOptions,
  type CompressionPoint,
  type CompressionRanking,
  type CompressionResult,
} from './screening.js';
export {
  GraphitModel,
  type RefitHeadOptions,
  type PredictOptions as GraphitPredictOptions,
  type GraphitConfig,
  type GraphitPrediction,
  type GraphitAttention,
  type GraphInput,
  type Molecule,
} from './graphit.js';
