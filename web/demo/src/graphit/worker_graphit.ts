// The worker side of the "Molecules (GraphiT)" panel: it owns the committed model, and the model whose output layer
// the page refitted (if any), and answers the panel's requests with the library's GraphitModel (the SMILES is
// parsed by the core: atom i is RDKit's atom i).

import { InductiveError, type GraphitModel, type Inductive, type ProgressCallback } from 'inductive';
import type {
  GraphitAnalyseResponse,
  GraphitInfoResponse,
  GraphitRefitRequest,
  GraphitRefitResponse,
  GraphitRequest,
  GraphitResponse,
  GraphitSaveResponse,
} from '../protocol';
import { bbbpExamples } from './bbbp_examples';
import { MODEL_FILE_NAME, modelUrl } from './model_asset';

interface Loaded {
  model: GraphitModel;
  fileBytes: number;
}

let loading: Promise<Loaded> | null = null;
/** The committed model with a refitted output layer; null: the committed model is the current one. */
let refitted: GraphitModel | null = null;

const current = (m: Loaded): GraphitModel => refitted ?? m.model;

/** Fetches and loads the committed model once; a failed load is retried by the next request. */
function loaded(ind: Inductive): Promise<Loaded> {
  loading ??= (async () => {
    const res = await fetch(modelUrl);
    if (!res.ok) {
      throw new InductiveError(
        'io',
        `graphit: cannot fetch the model ${MODEL_FILE_NAME} (${res.url}): HTTP ${res.status}`,
      );
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { model: ind.loadGraphitModel(bytes), fileBytes: bytes.length };
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

function info(m: Loaded): GraphitInfoResponse {
  const { model } = m;
  return {
    method: 'graphit-info',
    fileName: MODEL_FILE_NAME,
    fileBytes: m.fileBytes,
    producer: model.producer,
    nodeLabels: model.nodeLabels,
    labels: model.labels,
    layers: model.layers,
    heads: model.heads,
    dim: model.dim,
    kernel: model.kernel,
  };
}

function pack(arrays: Float32Array[]): Float32Array {
  const out = new Float32Array(arrays.reduce((s, a) => s + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

function analyse(m: Loaded, smiles: string): GraphitAnalyseResponse {
  const model = current(m);
  const start = performance.now();
  const a = model.attention(smiles);
  const computeMs = performance.now() - start;
  return {
    method: 'graphit-analyse',
    smiles,
    n: a.n,
    atoms: a.atoms,
    bonds: a.bonds,
    probabilities: a.probabilities,
    labels: model.labels,
    classIndex: a.classIndex,
    layers: a.layers.length,
    attention: pack(a.layers),
    saliency: pack(a.saliency),
    meanSaliency: a.meanSaliency,
    kernel: a.kernel,
    refitted: refitted !== null,
    computeMs,
  };
}

/**
 * Refits from the committed model (never from an earlier refit, so a refit does not depend on the previous one).
 * The previous refitted model is freed only once the new one exists: a failed or cancelled refit (the library
 * leaves its model as it was) keeps the page's current model.
 */
function refit(m: Loaded, req: GraphitRefitRequest, progress: ProgressCallback): GraphitRefitResponse {
  const start = performance.now();
  const next = m.model.refitHead(req.smiles, req.labels, { onProgress: progress });
  const computeMs = performance.now() - start;
  const fit = next.headFit;
  if (fit === null) {
    next.dispose();
    throw new InductiveError('internal', 'graphit refit: the refitted model has no report');
  }
  refitted?.dispose();
  refitted = next;
  return {
    method: 'graphit-refit',
    classes: next.labels,
    classCounts: fit.classCounts,
    molecules: req.smiles.length,
    lambda: fit.lambda,
    lambdaChoice: fit.lambdaChoice,
    trainAccuracy: fit.trainAccuracy,
    cvAccuracy: fit.cvAccuracy ?? null,
    folds: fit.folds ?? null,
    computeMs,
  };
}

function save(m: Loaded): GraphitSaveResponse {
  return { method: 'graphit-save', bytes: current(m).toBytes(), refitted: refitted !== null };
}

export async function solveGraphit(
  ind: Inductive,
  req: GraphitRequest,
  progress: ProgressCallback,
): Promise<GraphitResponse> {
  const m = await loaded(ind);
  switch (req.method) {
    case 'graphit-info':
      return info(m);
    case 'graphit-analyse':
      return analyse(m, req.smiles);
    case 'graphit-examples':
      return bbbpExamples(ind, m.model.nodeLabels, req.perClass);
    case 'graphit-refit':
      return refit(m, req, progress);
    case 'graphit-reset':
      refitted?.dispose();
      refitted = null;
      return { method: 'graphit-reset' };
    case 'graphit-save':
      return save(m);
  }
}

/** The buffers a response can hand over to the page without copying (each one its own). */
export function graphitTransferables(res: GraphitResponse): Transferable[] {
  if (res.method === 'graphit-save') return [res.bytes.buffer as ArrayBuffer];
  if (res.method !== 'graphit-analyse') return [];
  const arrays = [res.probabilities, res.attention, res.saliency, res.meanSaliency, res.kernel];
  return [...new Set(arrays.filter((a) => a !== null).map((a) => a.buffer as ArrayBuffer))];
}
