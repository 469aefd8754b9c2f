// The worker side of the "Sequences (OTKE)" panel: it owns the models (the committed one and the one with a head
// fitted in the page) and answers the panel's requests with the library's OtkeModel methods.

import { InductiveError, type Inductive, type OtkeModel, type ProgressCallback } from 'inductive';
import {
  MAX_MODEL_FILE_BYTES,
  type OtkeAnalyseRequest,
  type OtkeAnalyseResponse,
  type OtkeFitHeadRequest,
  type OtkeFitHeadResponse,
  type OtkeInfoResponse,
  type OtkeLearnRequest,
  type OtkeLearnResponse,
  type OtkeOpenRequest,
  type OtkeOpenResponse,
  type OtkeRequest,
  type OtkeResponse,
  type OtkeSaveResponse,
} from '../protocol';
import { parseLabelledFasta } from './fasta';
import { MODEL_FILE_NAME, modelUrl } from './model_asset';

interface Models {
  original: OtkeModel;
  /** `original` until a head is fitted or a model learnt. */
  current: OtkeModel;
  /** Whether `current` was learnt from the page's sequences (its embedding differs from the file's). */
  learnt: boolean;
  fileName: string;
  fileBytes: number;
}

let loading: Promise<Models> | null = null;

/** Fetches and loads the committed model once; a failed load is retried by the next request. */
function models(ind: Inductive): Promise<Models> {
  loading ??= (async () => {
    const res = await fetch(modelUrl);
    if (!res.ok) {
      throw new InductiveError(
        'io',
        `otke: cannot fetch the model ${MODEL_FILE_NAME} (${res.url}): HTTP ${res.status}`,
      );
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const original = ind.loadOtkeModel(bytes);
    return { original, current: original, learnt: false, fileName: MODEL_FILE_NAME, fileBytes: bytes.length };
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

function info(m: Models): OtkeInfoResponse {
  const { config } = m.original;
  const pooling = config.pooling.type === 'otk' ? config.pooling : null;
  return {
    method: 'otke-info',
    fileName: m.fileName,
    fileBytes: m.fileBytes,
    producer: m.original.producer,
    labels: m.original.labels,
    k: config.input.type === 'sequence' ? config.input.k : 0,
    anchors: m.original.embedDim,
    p: pooling?.p ?? 0,
    q: pooling?.q ?? 0,
    eps: pooling?.eps ?? 0,
    iters: pooling?.iters ?? 0,
    sigmaPos: pooling?.sigma_pos ?? 0,
    outputDim: m.original.outputDim,
  };
}

function analyse(m: Models, req: OtkeAnalyseRequest): OtkeAnalyseResponse {
  const start = performance.now();
  const t = m.current.transportPlans([req.sequence], { names: [req.name] });
  const pred = m.current.predictEmbeddings(t.embeddings);
  // The file's prediction next to the page's: from the same embedding when only the head changed.
  const original =
    m.current === m.original
      ? null
      : m.learnt
        ? m.original.predict([req.sequence], { names: [req.name] })
        : m.original.predictEmbeddings(t.embeddings);
  const computeMs = performance.now() - start;
  // One sequence: its plans are exactly n × p each (nMax = n); packed back to back for one transfer.
  const n = t.lengths[0] ?? 0;
  const plans = new Float32Array(t.q * n * t.p);
  t.plans.forEach((plan, r) => plans.set(plan.subarray(0, n * t.p), r * n * t.p));
  return {
    method: 'otke-analyse',
    length: t.sequenceLengths[0] ?? 0,
    n,
    k: t.k,
    p: t.p,
    q: t.q,
    anchors: m.current.embedDim,
    plans,
    embedding: t.embeddings,
    probabilities: pred.probabilities,
    originalProbabilities: original?.probabilities ?? null,
    labels: m.current.labels,
    computeMs,
  };
}

function fitHead(m: Models, req: OtkeFitHeadRequest): OtkeFitHeadResponse {
  const start = performance.now();
  // Always from the committed model, so that fitting again replaces the page's head rather than stacking on it.
  const fitted = m.original.fitHead(req.sequences, req.labels, { names: req.names });
  const computeMs = performance.now() - start;
  replaceCurrent(m, fitted, false);
  const r = fitted.headFit!;
  return {
    method: 'otke-fit-head',
    labels: fitted.labels,
    lambda: r.lambda,
    lambdaChoice: r.lambdaChoice,
    trainAccuracy: r.trainAccuracy,
    cvAccuracy: r.cvAccuracy ?? null,
    folds: r.folds ?? null,
    classCounts: r.classCounts,
    computeMs,
  };
}

function replaceCurrent(m: Models, next: OtkeModel, learnt: boolean): void {
  if (m.current !== m.original) m.current.dispose();
  m.current = next;
  m.learnt = learnt;
}

// Unsupervised stage on every sequence, then a head on the labelled ones; a cancel (progress returning false)
// stops either and leaves the current model as it was. The FASTA is read and parsed here, not in the page.
async function learn(
  ind: Inductive,
  m: Models,
  req: OtkeLearnRequest,
  progress: ProgressCallback,
): Promise<OtkeLearnResponse> {
  const name = req.fasta instanceof File ? `learn: ${req.fasta.name}` : 'learn';
  const parsed = parseLabelledFasta(ind, typeof req.fasta === 'string' ? req.fasta : await req.fasta.text(), name);
  const { sequences } = parsed;
  const labelled = parsed.labels.flatMap((l, i) => (l === '' ? [] : [i]));
  if (labelled.length === 0) {
    throw new InductiveError('invalid_argument', 'learn: no labelled sequence: label a few with label=<class>');
  }
  const start = performance.now();
  const base = ind.fitOtke(sequences, {
    k: req.k,
    anchors: req.anchors,
    p: req.p,
    seed: req.seed,
    onProgress: progress,
  });
  const fitMs = performance.now() - start;
  let learnt: OtkeModel;
  try {
    const classes = labelled.map((i) => parsed.labels[i]);
    // The file's class order when the page uses its class names, so that both heads line up in the prediction card.
    const order = classes.every((c) => m.original.labels.includes(c)) ? { classes: m.original.labels } : {};
    learnt = base.fitHead(
      labelled.map((i) => sequences[i]),
      classes,
      { ...order, names: labelled.map((i) => `sequence ${i + 1}`), onProgress: progress },
    );
  } finally {
    base.dispose();
  }
  const headMs = performance.now() - start - fitMs;
  replaceCurrent(m, learnt, true);
  const r = learnt.headFit!;
  const pooling = learnt.config.pooling;
  return {
    method: 'otke-learn',
    sequences: sequences.length,
    labelled: labelled.length,
    k: req.k,
    anchors: learnt.embedDim,
    p: pooling.type === 'otk' ? pooling.p : 0,
    outputDim: learnt.outputDim,
    labels: learnt.labels,
    lambda: r.lambda,
    lambdaChoice: r.lambdaChoice,
    trainAccuracy: r.trainAccuracy,
    classCounts: r.classCounts,
    fitMs,
    headMs,
  };
}

function save(m: Models): OtkeSaveResponse {
  return {
    method: 'otke-save',
    bytes: m.current.toBytes(),
    fitted: m.current !== m.original && !m.learnt,
    learnt: m.learnt,
  };
}

// The user's model file in place of the committed one; the old models are freed once the new one has loaded.
async function open(ind: Inductive, m: Models, req: OtkeOpenRequest): Promise<OtkeOpenResponse> {
  if (req.file.size > MAX_MODEL_FILE_BYTES) {
    throw new InductiveError(
      'invalid_argument',
      `otke: ${req.name} has ${req.file.size} bytes; the demo opens model ` +
        `files up to ${MAX_MODEL_FILE_BYTES / 2 ** 20} MB (the library and the CLI read larger ones)`,
    );
  }
  const bytes = new Uint8Array(await req.file.arrayBuffer());
  const original = ind.loadOtkeModel(bytes);
  if (m.current !== m.original) m.current.dispose();
  m.original.dispose();
  const next: Models = { original, current: original, learnt: false, fileName: req.name, fileBytes: bytes.length };
  loading = Promise.resolve(next);
  return { method: 'otke-open', info: info(next) };
}

export async function solveOtke(ind: Inductive, req: OtkeRequest, progress: ProgressCallback): Promise<OtkeResponse> {
  const m = await models(ind);
  switch (req.method) {
    case 'otke-info':
      return info(m);
    case 'otke-analyse':
      return analyse(m, req);
    case 'otke-fit-head':
      return fitHead(m, req);
    case 'otke-learn':
      return learn(ind, m, req, progress);
    case 'otke-open':
      return open(ind, m, req);
    case 'otke-reset-head':
      replaceCurrent(m, m.original, false);
      return { method: 'otke-reset-head' };
    case 'otke-save':
      return save(m);
  }
}

/** The buffers a response can hand over to the page without copying (each one its own). */
export function otkeTransferables(res: OtkeResponse): Transferable[] {
  switch (res.method) {
    case 'otke-analyse': {
      const arrays = [res.plans, res.embedding, res.probabilities, res.originalProbabilities];
      return [...new Set(arrays.filter((a) => a !== null).map((a) => a.buffer as ArrayBuffer))];
    }
    case 'otke-save':
      return [res.bytes.buffer as ArrayBuffer];
    default:
      return [];
  }
}
