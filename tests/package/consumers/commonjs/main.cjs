// (d) A CommonJS consumer: `require('inductive')`. The package is ES modules only; Node >= 20.19 loads it through
// require(esm) (the package has no top-level await, so this works); older Node versions answer with Node's own
// ERR_REQUIRE_ESM, and web/README.md tells their users to `await import('inductive')`.
const { init, InductiveError } = require('inductive');

init().then(
  (ind) => {
    const r = ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2, { eps: 0.5 });
    let errorCode = null;
    try {
      ind.sinkhorn(new Float32Array([0, 1, 1, 0]), 2, 2, { eps: -1 });
    } catch (e) {
      errorCode = e instanceof InductiveError ? e.code : String(e);
    }
    console.log(JSON.stringify({ version: ind.version, planSum: r.plan.reduce((s, v) => s + v, 0), errorCode }));
  },
  (e) => {
    console.error(`error: ${e.message}`);
    process.exit(2);
  },
);
