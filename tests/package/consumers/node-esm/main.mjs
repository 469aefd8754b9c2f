// (a) A Node ESM script, as a user writes one after `npm install inductive`. Prints one JSON line of results;
// tests/package/package.e2e.mjs checks them. argv[2]: an OTKE model file written by the native CLI.
import { readFile } from 'node:fs/promises';
import { init, InductiveError, relaxedSimdSupported } from 'inductive';

const ind = await init();
// 2 x 2, cost [[0, 1], [1, 0]], uniform marginals: P11 = e^(1/eps) / (2 (1 + e^(1/eps))) in closed form.
const eps = 0.5;
const r = ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2, { eps, tol: 1e-7, maxIter: 1000 });
const closedForm = Math.exp(1 / eps) / (2 * (1 + Math.exp(1 / eps)));

const model = ind.loadOtkeModel(new Uint8Array(await readFile(process.argv[2])));
const prediction = model.predict(['TTGACAATTAATCATCGGCTCGTATAATGTGTGGAATTGTGAGCGGATAACAATT']);
model.dispose();

let errorCode = null;
try {
  ind.sinkhorn(new Float32Array(3), 2, 2);
} catch (e) {
  errorCode = e instanceof InductiveError ? e.code : `not an InductiveError: ${e}`;
}
console.log(
  JSON.stringify({
    version: ind.version,
    simd: ind.simd,
    relaxedSupported: relaxedSimdSupported(),
    probabilities: Array.from(prediction.probabilities),
    planError: Math.abs(r.plan[0] - closedForm),
    converged: r.converged,
    labels: prediction.labels,
    probabilitySum: prediction.probabilities[0] + prediction.probabilities[1],
    errorCode,
  }),
);
