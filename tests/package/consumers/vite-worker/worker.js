// The Worker: loads the package, counts how the wasm is compiled (streaming from the response, as browsers
// should, or from a downloaded buffer), solves a closed-form Sinkhorn problem and predicts with a native model.
// It also runs work the core splits across threads (a Sinkhorn batch, OTKE on many sequences) and returns those
// outputs whole: the page compares them between a threaded (cross-origin-isolated) and a one-thread run.
import { init, InductiveError } from 'inductive';

let streamed = 0;
const instantiateStreaming = WebAssembly.instantiateStreaming;
WebAssembly.instantiateStreaming = (...args) => {
  streamed += 1;
  return instantiateStreaming.apply(WebAssembly, args);
};

self.onmessage = async ({ data }) => {
  try {
    const ind = await init();
    const eps = 0.5;
    const r = ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2, { eps, tol: 1e-7, maxIter: 1000 });
    const closedForm = Math.exp(1 / eps) / (2 * (1 + Math.exp(1 / eps)));
    const response = await fetch(data.model);
    const model = ind.loadOtkeModel(new Uint8Array(await response.arrayBuffer()));
    const prediction = model.predict(['TTGACAATTAATCATCGGCTCGTATAATGTGTGGAATTGTGAGCGGATAACAATT']);
    // Work for several threads: 64 problems of 40 x 30, and 48 sequences through the OTKE model.
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const batch = 64,
      n = 40,
      p = 30;
    const cost = Float32Array.from({ length: batch * n * p }, random);
    const solved = ind.sinkhornBatch(cost, { batch, nMax: n, pMax: p }, { eps: 0.05, maxIter: 200 });
    const letters = 'ACGT';
    const sequences = Array.from({ length: 48 }, () =>
      Array.from({ length: 150 }, () => letters[Math.floor(random() * 4)]).join(''),
    );
    // And 24 molecules through the GraphiT model (its attention is split by graph).
    const graphit = ind.loadGraphitModel(new Uint8Array(await (await fetch(data.graphitModel)).arrayBuffer()));
    const rings = ['c1ccccc1', 'c1ccc2ccccc2c1', 'c1ccc2cc3ccccc3cc2c1'];
    const groups = ['O=[N+]([O-])', 'N', 'Cl', 'Br', 'O', 'F', 'I', 'CC'];
    const molecules = rings.flatMap((r) => groups.map((g) => `${g}${r}`));
    const parallel = {
      plan: Array.from(solved.plan),
      probabilities: Array.from(model.predict(sequences).probabilities),
      graphit: Array.from(graphit.predictSmiles(molecules).probabilities),
    };
    graphit.dispose();
    // dispose() stops the threaded module's Workers; a model loaded before keeps working (on one thread).
    const survivor = ind.loadOtkeModel(new Uint8Array(await (await fetch(data.model)).arrayBuffer()));
    let errorCode = null;
    try {
      ind.loadOtkeModel(new Uint8Array(16));
    } catch (e) {
      errorCode = e instanceof InductiveError ? e.code : String(e);
    }
    model.dispose();
    ind.dispose();
    const afterDispose = Array.from(survivor.predict(sequences).probabilities);
    survivor.dispose();
    const wasm = performance
      .getEntriesByType('resource')
      .map((e) => e.name)
      .filter((n) => n.endsWith('.wasm'));
    self.postMessage({
      ok: true,
      simd: ind.simd,
      threads: ind.threads,
      threadsNote: ind.threadsNote,
      isolated: self.crossOriginIsolated === true,
      parallel,
      survivorMatches: JSON.stringify(afterDispose) === JSON.stringify(parallel.probabilities),
      planError: Math.abs(r.plan[0] - closedForm),
      labels: prediction.labels,
      probabilitySum: prediction.probabilities[0] + prediction.probabilities[1],
      errorCode,
      streamed,
      wasm,
    });
  } catch (e) {
    self.postMessage({ ok: false, error: String(e?.stack ?? e) });
  }
};
