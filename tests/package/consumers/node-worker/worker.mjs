import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { init } from 'inductive';

const ind = await init();
const bytes = new Uint8Array(readFileSync(workerData.model));
const graphitBytes = new Uint8Array(readFileSync(workerData.graphit));
const MODELS = 1000; // OTKE models, and as many GraphiT models
const SEQUENCES = 100_000;
const BATCH = 1000;

// JS heap of this Worker's isolate after full collections (main.mjs starts Node with --expose-gc).
function snapshot() {
  for (let i = 0; i < 3; i++) globalThis.gc?.();
  return { wasm: ind.memoryBytes, js: getHeapStatistics().used_heap_size };
}

// Random 81-nt DNA, as long as the model's training sequences; a fixed LCG so every run embeds the same set.
let state = 12345;
function sequence() {
  let s = '';
  for (let i = 0; i < 81; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    s += 'ACGT'[state >>> 30];
  }
  return s;
}

const dispose = Symbol.dispose;
function loadUseDispose(i) {
  const model = ind.loadOtkeModel(bytes);
  model.predict(['TTGACAATTAATCATCGGCTCGTATAATGTGTGGAATTGTGAGCGGATAACAATT']);
  const graph = ind.loadGraphitModel(graphitBytes);
  graph.predictSmiles(['O=[N+]([O-])c1ccccc1']);
  if (dispose !== undefined && i % 2 === 1) {
    // what `using` calls
    model[dispose]();
    graph[dispose]();
  } else {
    model.dispose();
    graph.dispose();
  }
}

for (let i = 0; i < 20; i++) loadUseDispose(i);
const beforeModels = snapshot();
let t = performance.now();
for (let i = 0; i < MODELS; i++) loadUseDispose(i);
const afterModels = snapshot();
const modelsSeconds = (performance.now() - t) / 1000;

const model = ind.loadOtkeModel(bytes);
const batch = () => Array.from({ length: BATCH }, sequence);
let dim = 0;
for (let b = 0; b < 2; b++) dim = model.embedSequences(batch()).embeddings.length / BATCH;
const beforeEmbed = snapshot();
t = performance.now();
for (let done = 0; done < SEQUENCES; done += BATCH) {
  const e = model.embedSequences(batch()).embeddings;
  if (e.length !== BATCH * dim || !Number.isFinite(e[e.length - 1])) throw new Error('bad embeddings');
}
const afterEmbed = snapshot();
const embedSeconds = (performance.now() - t) / 1000;
model.dispose();

parentPort.postMessage({
  symbolDispose: dispose !== undefined,
  models: MODELS,
  modelsSeconds,
  modelsWasmGrowth: afterModels.wasm - beforeModels.wasm,
  modelsJsGrowth: afterModels.js - beforeModels.js,
  sequences: SEQUENCES,
  embedSeconds,
  embedWasmGrowth: afterEmbed.wasm - beforeEmbed.wasm,
  embedJsGrowth: afterEmbed.js - beforeEmbed.js,
  wasmBytes: afterEmbed.wasm,
  jsBytes: afterEmbed.js,
  gc: typeof globalThis.gc === 'function',
});
