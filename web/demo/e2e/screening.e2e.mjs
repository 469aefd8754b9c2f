// End-to-end test of the "Screening" panel of the built demo in Debian Chromium (playwright-core).
//
//   npm run build --workspace web/demo && npm run test:e2e --workspace web/demo   (runs every e2e script in turn)
//
// Serves web/demo/dist as plain static files (DEMO_DIST: another build folder; DEMO_URL: a running server), opens
// the panel and checks what a user sees: digits 9 vs rest at lambda 1 screens exactly the samples the native CLI
// screens (tests/data/screening), the three figures are drawn, lambda and mu change the outcome, the breast-cancer
// and interval-regression sets run, a malformed dropped file shows the library's error code (and the page goes on
// working), a valid dropped file is screened, a long run is cancelled, a regularisation path screens what the
// native CLI's path screens at each lambda, and the compression curves are the native CLI's. Screenshots:
// build/screenshots/demo-screening*.png.

import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailed, check, runDemoTest, shotDir } from './harness.mjs';

const TIMEOUT_MS = 20_000;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const REFERENCE = join(repoRoot, 'tests/data/screening/digits-9-vs-rest-lambda1.json');
const CLI = process.env.INDUCTIVE_CLI ?? join(repoRoot, 'build', 'native-release', 'bin', 'inductive');

const log = (msg) => console.log(`screening e2e: ${msg}`);
const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();
const state = (page) =>
  byTestId(page, 'screening-status').evaluate((el) => ({
    state: el.dataset.state,
    seq: Number(el.dataset.seq),
    text: el.textContent,
    lambda: el.dataset.lambda,
  }));

/** Waits until the panel's status settles (done or error) past `afterSeq`. */
async function settled(page, afterSeq, what) {
  try {
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="screening-status"]');
        return el && Number(el.dataset.seq) > prev && (el.dataset.state === 'done' || el.dataset.state === 'error');
      },
      afterSeq,
      { timeout: TIMEOUT_MS },
    );
  } catch {
    const now = await state(page);
    throw new CheckFailed(`${what}: no result within ${TIMEOUT_MS} ms (status: ${now.state}, "${now.text}")`);
  }
  return state(page);
}

/** The result the panel shows, checked for what every successful run must satisfy. */
async function expectResult(page, what) {
  const st = await state(page);
  if (st.state === 'error') {
    throw new CheckFailed(
      `${what}: error box shows ${await text(page, 'screening-error-code')}: ${await text(page, 'screening-error-message')}`,
    );
  }
  check(st.state === 'done', `${what}: status should be "done", is "${st.state}"`);
  check(await byTestId(page, 'screening-error').isHidden(), `${what}: the error box should be hidden`);
  const fraction = Number(await byTestId(page, 'screening-fraction').getAttribute('data-value'));
  const nScreened = Number(await byTestId(page, 'screening-n-screened').getAttribute('data-value'));
  const shape = byTestId(page, 'screening-shape');
  const n = Number(await shape.getAttribute('data-n'));
  const p = Number(await shape.getAttribute('data-p'));
  check(
    fraction >= 0 && fraction <= 1 && Math.abs(fraction - nScreened / n) < 1e-12,
    `${what}: fraction ${fraction} should be screened / n = ${nScreened} / ${n}`,
  );
  const history = byTestId(page, 'screening-history');
  check((await history.getAttribute('data-drawn')) === 'true', `${what}: the history chart should be drawn`);
  const dots = await history.locator('.fraction-dots circle').count();
  check(
    dots === Number(await history.getAttribute('data-points')) && dots >= 3,
    `${what}: the history chart should have a dot per gap check (${dots})`,
  );
  check((await history.locator('polyline.fraction-line').count()) === 1, `${what}: the history line should be drawn`);
  const bars = await byTestId(page, 'screening-histogram').locator('rect.bar-kept, rect.bar-screened').count();
  log(
    `${what}: ${n} x ${p}, ${nScreened} screened (${(100 * fraction).toFixed(1)}%), ${dots} gap checks, ${bars} bars; ` +
      `${await text(page, 'screening-time')}`,
  );
  return { fraction, nScreened, n, p, dots, bars, seq: st.seq };
}

/** Moves the lambda slider to `step` (lambda = 10^(step/10) on the R10 series) as a user drag would. */
async function setRange(page, id, value) {
  await byTestId(page, id).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

async function run(page, url) {
  const native = JSON.parse(await readFile(REFERENCE, 'utf8'));
  await page.goto(`${url}#screening`);
  check(
    (await page.getByRole('tab', { name: 'Screening' }).getAttribute('aria-selected')) === 'true',
    'the "Screening" tab should exist and be selected by #screening',
  );

  // Digits 9 vs rest, squared hinge + L2, lambda 1: the native CLI's count, exactly.
  let st = await settled(page, 0, 'digits');
  const digits = await expectResult(page, 'digits 9 vs rest, lambda 1');
  check(st.lambda === '1', `the first run should use lambda 1, used ${st.lambda}`);
  check(digits.n === 1797 && digits.p === 64, `digits should be 1797 x 64, is ${digits.n} x ${digits.p}`);
  check(digits.fraction > 0.5, `digits: more than half the samples should be screened, got ${digits.fraction}`);
  check(
    digits.nScreened === native.n_screened,
    `digits: the page screened ${digits.nScreened}, the native CLI ${native.n_screened} (tests/data/screening)`,
  );
  check(digits.bars >= 10, `digits: the score histogram should have many bars, has ${digits.bars}`);
  check(
    (await byTestId(page, 'screening-histogram').locator('rect.bar-screened').count()) > 0 &&
      (await byTestId(page, 'screening-histogram').locator('rect.bar-kept').count()) > 0,
    'digits: the histogram should show screened and kept samples',
  );
  check(
    (await byTestId(page, 'screening-picture').getAttribute('data-drawn')) === 'false',
    'digits: the interval picture is for the one-feature set only',
  );
  await page.screenshot({ path: join(shotDir, 'demo-screening-digits.png'), fullPage: true });

  // A smaller lambda (0.1): a different fraction, and more screened (the dual gets sparser).
  await setRange(page, 'screening-lambda', -10);
  st = await settled(page, st.seq, 'lambda 0.1');
  const smaller = await expectResult(page, 'digits, lambda 0.1');
  check(st.lambda === '0.1', `the slider at step -10 should mean lambda 0.1, status says ${st.lambda}`);
  check(
    smaller.fraction !== digits.fraction && smaller.fraction > digits.fraction,
    `lambda 0.1 should screen more than lambda 1: ${smaller.fraction} vs ${digits.fraction}`,
  );

  // The ellipsoid method in the static test: the control reaches the library, which reports the steps it took; the
  // same balls come first, and the steps never screen fewer samples.
  const splitOf = async () => {
    const el = byTestId(page, 'screening-static-split');
    return { balls: Number(await el.getAttribute('data-balls')), steps: Number(await el.getAttribute('data-steps')) };
  };
  const before = await splitOf();
  check(before.steps === 0, `ellipsoid steps should default to 0, the page says ${before.steps}`);
  await byTestId(page, 'screening-ellipsoid-steps').fill('20');
  await byTestId(page, 'screening-ellipsoid-steps').dispatchEvent('change');
  st = await settled(page, st.seq, '20 ellipsoid steps');
  const withSteps = await expectResult(page, 'digits, lambda 0.1, 20 ellipsoid steps');
  const after = await splitOf();
  check(after.steps >= 1 && after.steps <= 20, `20 ellipsoid steps asked, the library took ${after.steps}`);
  check(after.balls === before.balls, `the balls should screen the same with steps: ${after.balls} vs ${before.balls}`);
  check(
    withSteps.nScreened >= smaller.nScreened,
    `steps screened fewer: ${withSteps.nScreened} < ${smaller.nScreened}`,
  );
  log(`ellipsoid steps: ${await text(page, 'screening-static-split')}`);
  await byTestId(page, 'screening-ellipsoid-steps').fill('0');
  await byTestId(page, 'screening-ellipsoid-steps').dispatchEvent('change');
  st = await settled(page, st.seq, 'back to 0 ellipsoid steps');

  // Breast cancer (standardised in the page's worker), intercept on.
  await byTestId(page, 'screening-source').selectOption('breast-cancer');
  st = await settled(page, st.seq, 'breast cancer');
  const cancer = await expectResult(page, 'breast cancer');
  check(cancer.n === 569 && cancer.p === 30, `breast cancer should be 569 x 30, is ${cancer.n} x ${cancer.p}`);
  check(cancer.nScreened > 0, 'breast cancer: some samples should be screened');

  // Interval regression: the 2-D picture, with screened and kept intervals and the fitted line.
  await byTestId(page, 'screening-source').selectOption('interval');
  st = await settled(page, st.seq, 'interval regression');
  const interval = await expectResult(page, 'interval regression, mu 0.2');
  const picture = byTestId(page, 'screening-picture');
  check((await picture.getAttribute('data-drawn')) === 'true', 'the interval picture should be drawn');
  const easy = await picture.locator('.intervals .screened line').count();
  const hard = await picture.locator('.intervals .kept line').count();
  check(
    easy + hard === interval.n && easy === interval.nScreened && easy > 0 && hard > 0,
    `the picture should draw ${interval.n} intervals, ${interval.nScreened} screened: ${easy} screened + ${hard} kept`,
  );
  check(
    (await picture.locator('line.fit-line').count()) >= 1 && (await picture.locator('.legend text').count()) === 3,
    'the picture should have the fitted line and a legend',
  );
  await setRange(page, 'screening-mu', 0.4);
  st = await settled(page, st.seq, 'mu 0.4');
  const wider = await expectResult(page, 'interval regression, mu 0.4');
  check(
    wider.nScreened > interval.nScreened,
    `wider intervals should screen more: ${wider.nScreened} vs ${interval.nScreened}`,
  );
  await page.screenshot({ path: join(shotDir, 'demo-screening.png'), fullPage: true });

  // A malformed dropped file: the library's code and the line it failed on; nothing else breaks.
  await byTestId(page, 'screening-file').setInputFiles({
    name: 'broken.svm',
    mimeType: 'text/plain',
    buffer: Buffer.from('+1 1:0.5 2:1\n-1 2:oops\n+1 1:2\n'),
  });
  st = await settled(page, st.seq, 'malformed file');
  check(st.state === 'error', `a malformed file should fail, status: "${st.text}"`);
  check(await byTestId(page, 'screening-error').isVisible(), 'the error box should be visible');
  const code = await text(page, 'screening-error-code');
  const message = await text(page, 'screening-error-message');
  check(
    code === 'invalid_argument' && message.startsWith('broken.svm: libsvm: line 2'),
    `the error box should show invalid_argument and the line: "${code}": "${message}"`,
  );
  log(`malformed file: error box shows ${code}: ${message}`);
  await page.screenshot({ path: join(shotDir, 'demo-screening-error.png'), fullPage: true });

  // A valid dropped CSV (header line, gzip-free): it becomes the dataset and is screened.
  const rows = ['f1,f2,label'];
  for (let i = 0; i < 60; i++) {
    const a = Math.cos(i * 1.7) * 2;
    const b = Math.sin(i * 0.9) * 2;
    rows.push(`${a.toFixed(4)},${b.toFixed(4)},${a + 0.5 * b > 0 ? 1 : 0}`);
  }
  await byTestId(page, 'screening-header').check();
  await byTestId(page, 'screening-file').setInputFiles({
    name: 'mine.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(rows.join('\n') + '\n'),
  });
  st = await settled(page, st.seq, 'dropped CSV');
  const mine = await expectResult(page, 'dropped mine.csv');
  check(mine.n === 60 && mine.p === 2, `mine.csv should be 60 x 2, is ${mine.n} x ${mine.p}`);
  check((await byTestId(page, 'screening-source').inputValue()) === 'file', 'the dropped file should be the dataset');

  await cancelLongRun(page, st);
  st = await state(page);

  // Back to digits: its defaults (lambda 1) and the native count again.
  await byTestId(page, 'screening-source').selectOption('digits');
  st = await settled(page, st.seq, 'digits again');
  const again = await expectResult(page, 'digits again');
  check(
    again.nScreened === native.n_screened,
    `digits again: ${again.nScreened} screened, native ${native.n_screened}`,
  );
  await regularisationPath(page, false);
  await regularisationPath(page, true);
  await compressionCurves(page);
}

// The path card on digits (9 vs rest): 20 lambdas from 1 to 0.001, with and without screening; the fraction
// screened at each lambda must be the native CLI's (`inductive path`, same grid and tolerance), and again with the
// card's working set ticked (`inductive path --working-set`).
async function regularisationPath(page, workingSet) {
  const box = byTestId(page, 'screening-path-working-set');
  if ((await box.isChecked()) !== workingSet) await box.click();
  await byTestId(page, 'screening-path-run').click();
  await page.waitForFunction(
    () => {
      const el = document.querySelector('[data-testid="screening-path-summary"]');
      return el && el.dataset.state !== 'busy' && el.dataset.state !== 'idle';
    },
    null,
    { timeout: 120_000 },
  );
  const summary = await byTestId(page, 'screening-path-summary').evaluate((el) => ({
    state: el.dataset.state,
    text: el.textContent,
    speedup: Number(el.dataset.speedup),
  }));
  check(summary.state === 'done', `the path should run: "${summary.text}"`);
  const chart = byTestId(page, 'screening-path-chart');
  check(
    (await chart.getAttribute('data-drawn')) === 'true' && (await chart.getAttribute('data-points')) === '20',
    'the path chart should show 20 lambdas',
  );
  const titles = await chart.locator('circle title').allTextContents();
  const fractions = titles.map((t) => Number(/: ([\d.]+)% screened/.exec(t)?.[1]) / 100);
  const out = join(tmpdir(), `inductive-path-${process.pid}.json`);
  execFileSync(
    CLI,
    [
      'path',
      '--csv',
      join(repoRoot, 'data', 'screening', 'digits.csv.gz'),
      '--one-vs-rest',
      '9',
      '--lambda-max',
      '1',
      '--ratio',
      '0.001',
      '--count',
      '20',
      '--tol',
      '1e-9',
      '--screening-only',
      ...(workingSet ? ['--working-set'] : []),
      '--out',
      out,
    ],
    { stdio: 'ignore' },
  );
  const nativePath = JSON.parse(await readFile(out, 'utf8'));
  await rm(out, { force: true });
  nativePath.points.forEach((pt, i) => {
    check(
      Math.abs(fractions[i] - pt.fraction_screened) <= 0.005,
      `lambda ${pt.lambda}: the page screened ${fractions[i]}, the native CLI ${pt.fraction_screened}`,
    );
  });
  check(
    summary.text.includes('working set') === workingSet,
    `the summary should say whether the working set ran: "${summary.text}"`,
  );
  if (!workingSet) await chart.screenshot({ path: join(shotDir, 'demo-screening-path.png') });
  log(`path: ${summary.text} (fractions match the native CLI at all 20 lambdas)`);
}

// The compression card on digits (9 vs rest, lambda 1): the certified count and every point's test accuracy must be
// the native CLI's (`inductive compress`, same held-out split, fractions and tolerance).
async function compressionCurves(page) {
  await byTestId(page, 'screening-compression-run').click();
  await page.waitForFunction(
    () => {
      const el = document.querySelector('[data-testid="screening-compression-summary"]');
      return el && el.dataset.state !== 'busy' && el.dataset.state !== 'idle';
    },
    null,
    { timeout: 120_000 },
  );
  const summary = await byTestId(page, 'screening-compression-summary').evaluate((el) => ({
    state: el.dataset.state,
    text: el.textContent,
    certified: Number(el.dataset.certified),
  }));
  check(summary.state === 'done', `the compression curves should run: "${summary.text}"`);
  const chart = byTestId(page, 'screening-compression-chart');
  check(
    (await chart.getAttribute('data-drawn')) === 'true' &&
      (await chart.getAttribute('data-curves')) === '3' &&
      (await chart.getAttribute('data-points')) === '30',
    'the compression chart should show 3 curves of 10 points',
  );
  const out = join(tmpdir(), `inductive-compress-${process.pid}.json`);
  execFileSync(
    CLI,
    [
      'compress',
      '--csv',
      join(repoRoot, 'data', 'screening', 'digits.csv.gz'),
      '--one-vs-rest',
      '9',
      '--lambda',
      '1',
      '--tol',
      '1e-9',
      '--out',
      out,
    ],
    { stdio: 'ignore' },
  );
  const native = JSON.parse(await readFile(out, 'utf8'));
  await rm(out, { force: true });
  check(
    summary.certified === native.n_certified,
    `certified removable: the page ${summary.certified}, the native CLI ${native.n_certified}`,
  );
  for (const curve of native.curves) {
    const titles = await chart.locator(`g[data-ranking="${curve.ranking}"] circle title`).allTextContents();
    const accuracy = titles.map((t) => Number(/test accuracy ([\d.]+)%/.exec(t)?.[1]) / 100);
    curve.points.forEach((pt, i) => {
      check(
        Math.abs(accuracy[i] - pt.test_accuracy) <= 0.003,
        `${curve.ranking}, ${pt.fraction_removed} removed: the page ${accuracy[i]}, the native CLI ${pt.test_accuracy}`,
      );
    });
  }
  await chart.screenshot({ path: join(shotDir, 'demo-screening-compression.png') });
  log(`compression: ${summary.text} (certified count and 30 accuracies match the native CLI)`);
}

// A run long enough to cancel: 20000 x 50 samples, plain logistic loss (nothing to screen, so the solver runs its
// 1000 epochs) at the smallest lambda. Cancel once the progress bar moves; the panel must say "cancelled" and
// keep working (on a page without shared memory the worker restarts, and the dropped file is gone with it).
async function cancelLongRun(page, st) {
  await byTestId(page, 'screening-loss').selectOption('logistic');
  st = await settled(page, st.seq, 'logistic on mine.csv');
  const min = await byTestId(page, 'screening-lambda').getAttribute('min');
  await setRange(page, 'screening-lambda', Number(min));
  st = await settled(page, st.seq, 'smallest lambda on mine.csv');
  let seed = 5;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
  const lines = [Array.from({ length: 50 }, (_, j) => `f${j}`).join(',') + ',label'];
  for (let i = 0; i < 20000; i++) {
    const x = Array.from({ length: 50 }, rnd);
    lines.push(`${x.map((v) => v.toFixed(3)).join(',')},${x[0] + 0.3 * rnd() > 0 ? 1 : 0}`);
  }
  await byTestId(page, 'screening-file').setInputFiles({
    name: 'big.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(lines.join('\n') + '\n'),
  });
  await page.waitForFunction(
    () => {
      const bar = document.querySelector('[data-testid="screening-progress"]');
      return bar && !bar.hidden && bar.dataset.stage === 'solve';
    },
    null,
    { timeout: TIMEOUT_MS },
  );
  const clicked = Date.now();
  await byTestId(page, 'screening-cancel').click();
  await page.waitForFunction(
    (prev) => {
      const el = document.querySelector('[data-testid="screening-status"]');
      return el && Number(el.dataset.seq) > prev && el.dataset.state !== 'computing';
    },
    st.seq,
    { timeout: TIMEOUT_MS },
  );
  const after = await state(page);
  check(after.state === 'cancelled', `the long run should end cancelled, status: ${after.state} "${after.text}"`);
  check(await byTestId(page, 'screening-error').isHidden(), 'a cancel is not an error');
  const isolated = await page.evaluate(() => self.crossOriginIsolated);
  const fileOption = await byTestId(page, 'screening-source').locator('option[value="file"]').textContent();
  check(
    isolated === !/drop it again/.test(fileOption),
    `after the cancel the dropped file should ${isolated ? 'stay' : 'be gone (worker restarted)'}: "${fileOption}"`,
  );
  log(
    `cancel: 20000 x 50 logistic run cancelled ${Date.now() - clicked} ms after the click (${
      isolated ? 'shared memory: the solver stopped' : 'no shared memory: the worker restarted'
    }); "${after.text}"`,
  );
}

runDemoTest({
  name: 'screening e2e',
  shot: 'demo-screening-failure.png',
  timeoutMs: TIMEOUT_MS,
  body: async ({ page, url }) => {
    await run(page, url);
    log(
      `screenshots in ${shotDir} (demo-screening.png, demo-screening-digits.png, demo-screening-error.png, ` +
        'demo-screening-path.png, demo-screening-compression.png)',
    );
  },
});
