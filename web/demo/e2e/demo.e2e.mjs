// End-to-end test of the built demo in a real browser (Debian Chromium through playwright-core).
//
//   npm run build --workspace web/demo && npm run test:e2e --workspace web/demo
//
// Serves web/demo/dist as plain static files (nothing is built here), drives the Optimal transport panel like a
// user (slider, clicks, buttons, bad inputs) and checks what the page displays. Exits non-zero with a message
// naming the first failed check. DEMO_URL=http://127.0.0.1:5173/ runs the same checks against a running
// `vite dev` or `vite preview` server instead. CHROMIUM overrides the browser path.

import { join } from 'node:path';
import { CheckFailed, check, runDemoTest, shotDir } from './harness.mjs';

const TIMEOUT_MS = 15_000;
const MARGINAL_TOL = 1e-3;

const log = (msg) => console.log(`demo e2e: ${msg}`);

// ---- page helpers -------------------------------------------------------------------------------------------

const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();
async function number(page, id) {
  const raw = await text(page, id);
  const value = Number(raw);
  check(raw !== '' && Number.isFinite(value), `[data-testid=${id}] should show a number, shows "${raw}"`);
  return value;
}
const status = (page) =>
  byTestId(page, 'ot-status').evaluate((el) => ({
    state: el.dataset.state,
    seq: Number(el.dataset.seq),
    eps: el.dataset.eps,
    text: el.textContent,
  }));

/** Waits until the panel settles (result or error) on a solve newer than `afterSeq`. */
async function settled(page, afterSeq, what) {
  try {
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="ot-status"]');
        return el && Number(el.dataset.seq) > prev && (el.dataset.state === 'done' || el.dataset.state === 'error');
      },
      afterSeq,
      { timeout: TIMEOUT_MS },
    );
  } catch {
    const now = await status(page);
    throw new CheckFailed(`${what}: no result within ${TIMEOUT_MS} ms (status: ${now.state}, "${now.text}")`);
  }
  return status(page);
}

/** Reads the result table and checks what every successful solve must satisfy. */
async function expectGoodResult(page, what) {
  const st = await status(page);
  if (st.state === 'error') {
    throw new CheckFailed(
      `${what}: error box shows ${await text(page, 'ot-error-code')}: ${await text(page, 'ot-error-message')}`,
    );
  }
  check(st.state === 'done', `${what}: status should be "done", is "${st.state}"`);
  check(await byTestId(page, 'ot-error').isHidden(), `${what}: the error box should be hidden`);
  const r = {
    iterations: await number(page, 'ot-iterations'),
    marginalError: await number(page, 'ot-marginal-error'),
    rowDev: await number(page, 'ot-row-dev'),
    colDev: await number(page, 'ot-col-dev'),
    mass: await number(page, 'ot-mass'),
    cost: await number(page, 'ot-cost'),
    regCost: await number(page, 'ot-reg-cost'),
    timeMs: await number(page, 'ot-time-ms'),
    converged: await text(page, 'ot-converged'),
    size: await text(page, 'ot-size'),
    eps: st.eps,
    lines: await page.locator('[data-testid="ot-scene"] .plan-lines line').count(),
    planMax: await number(page, 'ot-plan-max'),
  };
  check(
    Number.isInteger(r.iterations) && r.iterations > 0,
    `${what}: iterations should be a positive integer, got ${r.iterations}`,
  );
  check(r.rowDev < MARGINAL_TOL, `${what}: row marginal deviation ${r.rowDev} should be < ${MARGINAL_TOL}`);
  check(r.colDev < MARGINAL_TOL, `${what}: column marginal deviation ${r.colDev} should be < ${MARGINAL_TOL}`);
  check(Math.abs(r.mass - 1) < MARGINAL_TOL, `${what}: plan mass ${r.mass} should be 1`);
  // Not required to be "yes": the library decides, and the page only has to show its answer.
  check(
    r.converged === 'yes' || r.converged === 'no',
    `${what}: converged should read yes or no, reads "${r.converged}"`,
  );
  check(r.cost > 0, `${what}: transport cost should be positive, got ${r.cost}`);
  check(r.timeMs >= 0, `${what}: compute time should be >= 0 ms, got ${r.timeMs}`);
  check(r.lines > 0, `${what}: the scene should draw plan lines`);
  check(r.planMax > 0, `${what}: the heatmap legend should show a positive max entry`);
  log(
    `${what}: ${r.size}, eps ${r.eps}, ${r.iterations} it (converged: ${r.converged}), <P,C> ${r.cost}, regularised ${r.regCost}, row/col dev ${r.rowDev}/${r.colDev}, ${r.timeMs} ms`,
  );
  return r;
}

async function expectError(page, what) {
  const st = await status(page);
  check(st.state === 'error', `${what}: status should be "error", is "${st.state}" ("${st.text}")`);
  check(await byTestId(page, 'ot-error').isVisible(), `${what}: the error box should be visible`);
  const code = await text(page, 'ot-error-code');
  const message = await text(page, 'ot-error-message');
  check(/^[A-Za-z][A-Za-z0-9_]*$/.test(code), `${what}: the error box should show a code, shows "${code}"`);
  check(message.length > 0, `${what}: the error box should show a message`);
  check((await text(page, 'ot-iterations')) === '—', `${what}: stale results should be cleared`);
  log(`${what}: error box shows ${code}: ${message}`);
  return { code, message };
}

// ---- the test -----------------------------------------------------------------------------------------------

async function run(page, url) {
  let seq = 0;
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('[data-testid="ot-status"]'), null, { timeout: TIMEOUT_MS });

  check(
    (await page.getByRole('tab', { name: 'Optimal transport' }).getAttribute('aria-selected')) === 'true',
    'the "Optimal transport" tab should exist and be selected',
  );
  let st = await settled(page, seq, 'first solve');
  seq = st.seq;
  const first = await expectGoodResult(page, 'first solve');
  check(
    st.eps === '0.05' && (await text(page, 'ot-eps-value')) === '0.05',
    `default eps should be 0.05, shows ${st.eps}`,
  );
  const version = await text(page, 'lib-version');
  const simd = await text(page, 'lib-simd');
  check(/^\d+\.\d+/.test(version), `the library version should be shown, shows "${version}"`);
  check(simd.length > 0 && !/loading|unavailable/.test(simd), `the SIMD kernel should be shown, shows "${simd}"`);
  // Threads: every core (up to 8) on a cross-origin-isolated page (npm start), one on a plain host, with the reason.
  const threads = await text(page, 'lib-threads');
  const threadsNote = await byTestId(page, 'lib-threads').getAttribute('title');
  const isolated = await page.evaluate(() => self.crossOriginIsolated);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const expected = isolated ? Math.min(cores, 8) : 1;
  check(
    threads === String(expected),
    `threads should be ${expected} (${isolated ? '' : 'not '}isolated, ${cores} cores), shows "${threads}"`,
  );
  check(
    isolated || /not cross-origin isolated/.test(threadsNote ?? ''),
    `one thread should say why on hover, says "${threadsNote}"`,
  );
  log(`library ${version}, SIMD kernel ${simd}, ${threads} thread(s)${isolated ? '' : ` (${threadsNote})`}`);

  // Smaller eps: the slider moves, the page re-solves, the plan sharpens (lower cost) and still has the right marginals.
  await byTestId(page, 'ot-eps').fill('-20');
  check(
    (await text(page, 'ot-eps-value')) === '0.01',
    `eps display should read 0.01 after the slider move, reads "${await text(page, 'ot-eps-value')}"`,
  );
  st = await settled(page, seq, 'eps = 0.01');
  seq = st.seq;
  check(st.eps === '0.01', `the settled result should be for eps 0.01, is for ${st.eps}`);
  const sharp = await expectGoodResult(page, 'eps = 0.01');
  check(
    sharp.cost < first.cost,
    `<P, C> should drop when eps drops (entropic blur shrinks): ${sharp.cost} vs ${first.cost}`,
  );
  check(
    sharp.regCost > first.regCost,
    `the regularised cost <P, C> - eps H(P) should grow when eps drops: ${sharp.regCost} vs ${first.regCost}`,
  );

  // Clicks add points: plain click -> source, Shift+click -> target.
  const [n0, p0] = [await number(page, 'ot-n'), await number(page, 'ot-p')];
  const scene = byTestId(page, 'ot-scene');
  const box = await scene.boundingBox();
  check(box && box.width > 100, 'the scene should be visible');
  await scene.click({ position: { x: box.width * 0.2, y: box.height * 0.9 } });
  st = await settled(page, seq, 'after adding a source point');
  seq = st.seq;
  await scene.click({ position: { x: box.width * 0.85, y: box.height * 0.08 }, modifiers: ['Shift'] });
  st = await settled(page, seq, 'after adding a target point');
  seq = st.seq;
  check(
    (await number(page, 'ot-n')) === n0 + 1 && (await number(page, 'ot-p')) === p0 + 1,
    `a click and a Shift+click should add one source and one target point (${n0}, ${p0} -> ${await text(page, 'ot-n')}, ${await text(page, 'ot-p')})`,
  );
  const grown = await expectGoodResult(page, 'with added points');
  check(grown.size === `${n0 + 1} × ${p0 + 1}`, `plan size should be ${n0 + 1} × ${p0 + 1}, shows ${grown.size}`);

  // Bad input 1: no points at all. The library rejects it and the page must show its code and message.
  await byTestId(page, 'ot-clear').click();
  st = await settled(page, seq, 'empty point sets');
  seq = st.seq;
  await expectError(page, 'empty point sets');
  await page.screenshot({ path: join(shotDir, 'demo-ot-error.png'), fullPage: true });

  // Recovery: a new random scene solves again and hides the error box.
  await byTestId(page, 'ot-random').click();
  st = await settled(page, seq, 'Random after the error');
  seq = st.seq;
  check((await byTestId(page, 'ot-seed').inputValue()) === '2', 'Random should advance the seed to 2');
  const fresh = await expectGoodResult(page, 'Random (seed 2)');
  check(fresh.cost !== grown.cost, 'a new random scene should give a different cost');

  // Bad input 2: a negative tolerance typed into the field.
  await byTestId(page, 'ot-tol').fill('-1');
  await byTestId(page, 'ot-tol').press('Enter');
  st = await settled(page, seq, 'negative tolerance');
  seq = st.seq;
  await expectError(page, 'negative tolerance');
  await byTestId(page, 'ot-tol').fill('1e-5');
  await byTestId(page, 'ot-tol').press('Enter');
  st = await settled(page, seq, 'tolerance restored');
  seq = st.seq;
  await expectGoodResult(page, 'tolerance restored');

  // A fast drag: 41 slider positions in one task. Intermediate solves may be skipped, but the page must settle on
  // the last position, never on a stale one.
  await byTestId(page, 'ot-eps').evaluate((input) => {
    for (let step = -30; step <= 10; step++) {
      input.value = String(step);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }
  });
  st = await settled(page, seq, 'fast slider drag');
  seq = st.seq;
  check(st.eps === '10', `after a drag ending at eps = 10 the page should settle on eps 10, settled on ${st.eps}`);
  await expectGoodResult(page, 'fast slider drag to eps = 10');

  // Back to the default eps for the reference screenshot.
  await byTestId(page, 'ot-eps').fill('-13');
  st = await settled(page, seq, 'eps back to 0.05');
  await expectGoodResult(page, 'eps back to 0.05');
  await page.screenshot({ path: join(shotDir, 'demo-ot.png'), fullPage: true });
}

/**
 * A page whose wasm cannot be fetched: the failure must reach the error box with the library's code, not hang
 * in "Loading…". Console errors are expected here (the browser and emscripten log the failed fetch).
 */
async function runWithoutWasm(context, url) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  try {
    await page.route(/\.wasm$/, (route) => route.fulfill({ status: 404, body: 'not found' }));
    await page.goto(url);
    await settled(page, 0, 'without the wasm file');
    const { code, message } = await expectError(page, 'without the wasm file');
    check(code === 'io', `a missing wasm should be reported as "io", shows "${code}"`);
    check(/HTTP 404/.test(message ?? ''), `the message should name the HTTP status, shows "${message}"`);
    check((await text(page, 'lib-version')) === 'unavailable', 'the header should say the library is unavailable');
  } finally {
    await page.close();
  }
}

runDemoTest({
  name: 'demo e2e',
  shot: 'demo-ot-failure.png',
  timeoutMs: TIMEOUT_MS,
  body: async ({ context, page, url, problems }) => {
    await run(page, url);
    check(problems.length === 0, `the page reported problems:\n  ${problems.join('\n  ')}`);
    await runWithoutWasm(context, url);
    log(`screenshots in ${shotDir} (demo-ot.png, demo-ot-error.png)`);
  },
});
