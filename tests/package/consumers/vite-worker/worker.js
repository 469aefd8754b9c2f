// The Worker: loads the package, counts how the wasm is compiled (streaming from the response, as browsers
// should, or from a downloaded buffer), solves a closed-form Sinkhorn problem and predicts with a native model.
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
    model.dispose();
    let errorCode = null;
    try {
      ind.loadOtkeModel(new Uint8Array(16));
    } catch (e) {
      errorCode = e instanceof InductiveError ? e.code : String(e);
    }
    const wasm = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm'));
    self.postMessage({
      ok: true,
      simd: ind.simd,
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
