// End-to-end test of the "Sequences (OTKE)" panel of the built demo in Debian Chromium (playwright-core).
//
//   npm run build --workspace web/demo && npm run test:e2e --workspace web/demo   (runs demo.e2e.mjs, then this)
//
// Serves web/demo/dist as plain static files (DEMO_DIST: another build folder; DEMO_URL: a running server), opens
// the panel, and checks what a user sees: a prediction for the first example, the transport-plan and embedding
// heatmaps actually drawn, the library's error code for an invalid and a too-short sequence, a new head fitted on
// a few labels that changes the prediction, the fitted model saved as a valid model file, and a screenshot
// build/screenshots/demo-otke.png. Exits non-zero naming the first failed check.

import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailed, check, runDemoTest, shotDir } from './harness.mjs';

const TIMEOUT_MS = 20_000;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = process.env.INDUCTIVE_CLI ?? join(repoRoot, 'build', 'native-release', 'bin', 'inductive');

const log = (msg) => console.log(`otke e2e: ${msg}`);

const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();
const state = (page, id) =>
  byTestId(page, id).evaluate((el) => ({
    state: el.dataset.state,
    seq: Number(el.dataset.seq),
    text: el.textContent,
  }));

/** Waits until the status element `id` settles (done or error) past `afterSeq`. */
async function settled(page, id, afterSeq, what) {
  try {
    await page.waitForFunction(
      ([sid, prev]) => {
        const el = document.querySelector(`[data-testid="${sid}"]`);
        return el && Number(el.dataset.seq) > prev && (el.dataset.state === 'done' || el.dataset.state === 'error');
      },
      [id, afterSeq],
      { timeout: TIMEOUT_MS },
    );
  } catch {
    const now = await state(page, id);
    throw new CheckFailed(`${what}: no result within ${TIMEOUT_MS} ms (${id}: ${now.state}, "${now.text}")`);
  }
  return state(page, id);
}

/** How many pixels of a canvas differ from its top-left one: a drawn heatmap has many. */
const paintedPixels = (page, id) =>
  byTestId(page, id).evaluate((canvas) => {
    const ctx = canvas.getContext('2d');
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set();
    let painted = 0;
    for (let i = 0; i < data.length; i += 4) {
      colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      if (data[i + 3] > 0) painted += 1;
    }
    return { painted, colours: colours.size, total: data.length / 4 };
  });

/** The prediction the panel shows, checked for what every successful analysis must satisfy. */
async function expectPrediction(page, what) {
  const st = await state(page, 'otke-status');
  if (st.state === 'error') {
    throw new CheckFailed(
      `${what}: error box shows ${await text(page, 'otke-error-code')}: ${await text(page, 'otke-error-message')}`,
    );
  }
  check(st.state === 'done', `${what}: status should be "done", is "${st.state}"`);
  check(await byTestId(page, 'otke-error').isHidden(), `${what}: the error box should be hidden`);
  const probs = await page
    .locator('[data-testid^="otke-prob-"]')
    .evaluateAll((els) => els.map((e) => Number(e.dataset.value)));
  check(probs.length >= 2, `${what}: there should be one probability per class, found ${probs.length}`);
  const sum = probs.reduce((a, b) => a + b, 0);
  check(
    probs.every((p) => p >= 0 && p <= 1) && Math.abs(sum - 1) < 1e-4,
    `${what}: probabilities ${probs} should sum to 1`,
  );
  const label = await text(page, 'otke-predicted-label');
  check(label.length > 0 && label !== '—', `${what}: a predicted class should be shown`);
  check(
    (await byTestId(page, 'otke-plan').getAttribute('data-drawn')) === 'true',
    `${what}: the plan heatmap should be drawn`,
  );
  check(
    (await byTestId(page, 'otke-embedding').getAttribute('data-drawn')) === 'true',
    `${what}: the embedding should be drawn`,
  );
  const plan = await paintedPixels(page, 'otke-plan');
  check(
    plan.colours > 50 && plan.painted > 0.5 * plan.total,
    `${what}: the plan heatmap should show many colours (${plan.colours} colours, ${plan.painted}/${plan.total} px)`,
  );
  const planMax = Number(await text(page, 'otke-plan-max'));
  check(planMax > 0 && planMax <= 1, `${what}: the plan's largest entry should be in (0, 1], is ${planMax}`);
  log(
    `${what}: ${label} (${probs.map((p) => p.toFixed(3)).join(' / ')}), plan max ${planMax}, ${await text(page, 'otke-details')}`,
  );
  return { label, probs };
}

async function expectError(page, what, code, fragment) {
  const st = await state(page, 'otke-status');
  check(st.state === 'error', `${what}: status should be "error", is "${st.state}" ("${st.text}")`);
  check(await byTestId(page, 'otke-error').isVisible(), `${what}: the error box should be visible`);
  const shown = await text(page, 'otke-error-code');
  const message = await text(page, 'otke-error-message');
  check(shown === code, `${what}: the error box should show ${code}, shows "${shown}": ${message}`);
  check(message.includes(fragment), `${what}: the message should mention "${fragment}": "${message}"`);
  check(
    (await byTestId(page, 'otke-plan').getAttribute('data-drawn')) === 'false',
    `${what}: the stale plan should be cleared`,
  );
  log(`${what}: error box shows ${shown}: ${message}`);
}

async function run(page, url) {
  await page.goto(`${url}#otke`);
  check(
    (await page.getByRole('tab', { name: 'Sequences (OTKE)' }).getAttribute('aria-selected')) === 'true',
    'the "Sequences (OTKE)" tab should exist and be selected by #otke',
  );
  let st = await settled(page, 'otke-status', 0, 'first prediction');
  const first = await expectPrediction(page, 'first example');
  const info = await text(page, 'otke-model-info');
  check(/k = \d+/.test(info) && /dimensions/.test(info), `the model description should be shown, shows "${info}"`);
  log(info);

  // Another example, picked from the list.
  await byTestId(page, 'otke-example').selectOption({ index: 5 });
  st = await settled(page, 'otke-status', st.seq, 'example 6');
  await expectPrediction(
    page,
    `example "${await byTestId(page, 'otke-example').locator('option:checked').textContent()}"`,
  );

  // Bad input: an invalid letter, then a sequence shorter than k. The library's code and message must show.
  const sequence = byTestId(page, 'otke-sequence');
  await sequence.fill('TTGACAATTAATCATCGGCTCGTATAATGTGTGGAXTTGTGAGCGGATAACAATT');
  st = await settled(page, 'otke-status', st.seq, 'invalid letter');
  await expectError(page, 'invalid letter', 'invalid_argument', "invalid letter 'X' at position 36");
  await page.screenshot({ path: join(shotDir, 'demo-otke-error.png'), fullPage: true });
  await sequence.fill('ACGTAC');
  st = await settled(page, 'otke-status', st.seq, 'too short');
  await expectError(page, 'too short', 'invalid_argument', 'shorter than k');

  // FASTA text with a header and line breaks is accepted (the page drops them) and recovers from the error.
  await sequence.fill(
    '>lac promoter\nTTTACACTTTATGCTTCCGGCTCGTATGTTGTGTGGAATTGTGAGCGGATAACAATTTCACACAGGAAACAGCTATGACCATG\n',
  );
  st = await settled(page, 'otke-status', st.seq, 'FASTA input');
  await expectPrediction(page, 'pasted FASTA (lac promoter)');

  // Back to the first example; then the few-labels case: 5 labels per class, fit, and the prediction changes.
  await byTestId(page, 'otke-example').selectOption({ index: 0 });
  st = await settled(page, 'otke-status', st.seq, 'first example again');
  const before = await expectPrediction(page, 'first example again');
  check(
    JSON.stringify(before.probs) === JSON.stringify(first.probs),
    'the same example should give the same prediction',
  );
  const classes = await byTestId(page, 'otke-label-0-0').evaluate((b) =>
    [...b.parentElement.children].map((c) => c.textContent),
  );
  const promoter = classes.findIndex((c) => !/non/i.test(c));
  const other = 1 - promoter;
  // The label list alternates promoter, non-promoter: even rows are promoters.
  for (const i of [0, 2, 4, 6, 8]) await byTestId(page, `otke-label-${i}-${promoter}`).click();
  for (const i of [1, 3, 5, 7, 9]) await byTestId(page, `otke-label-${i}-${other}`).click();
  check(
    (await byTestId(page, `otke-label-0-${promoter}`).getAttribute('aria-pressed')) === 'true',
    'a clicked label should show as pressed',
  );
  const fit0 = await state(page, 'otke-fit-status');
  await byTestId(page, 'otke-fit-head').click();
  const fit = await settled(page, 'otke-fit-status', fit0.seq, 'fit head');
  check(fit.state === 'done', `fitting should succeed: ${fit.text} (${await text(page, 'otke-error-message')})`);
  check(
    /training accuracy \d+%/.test(fit.text) && /5 \S+ \+ 5 \S+/.test(fit.text),
    `the fit summary should be shown: "${fit.text}"`,
  );
  log(`fit: ${fit.text}`);
  st = await settled(page, 'otke-status', st.seq, 'prediction with the fitted head');
  const after = await expectPrediction(page, 'first example, fitted head');
  check(
    JSON.stringify(after.probs) !== JSON.stringify(before.probs),
    'the prediction should change with the fitted head',
  );
  check(
    /fitted here on 10 labelled sequences/.test(await text(page, 'otke-head-note')),
    'the head note should say the head was fitted here',
  );
  check(
    (await page.locator('.otke-bar-marker').count()) === classes.length,
    "the file's head should be marked on the bars",
  );
  await page.screenshot({ path: join(shotDir, 'demo-otke.png'), fullPage: true });

  // Save: a download of a valid model file (safetensors header, model "otke", the fitted head's labels).
  const [download] = await Promise.all([page.waitForEvent('download'), byTestId(page, 'otke-save').click()]);
  check(
    download.suggestedFilename().endsWith('.safetensors'),
    `the download should be a .safetensors file: ${download.suggestedFilename()}`,
  );
  const bytes = await readFile(await download.path());
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  check(
    header.__metadata__?.model === 'otke' && 'head.weight' in header,
    'the saved file should be an otke model with a head',
  );
  check(
    /wasm/.test(header.__metadata__.producer),
    `the saved file should be written by the wasm build: ${header.__metadata__.producer}`,
  );
  log(`saved ${download.suggestedFilename()} (${bytes.length} bytes, producer "${header.__metadata__.producer}")`);

  // A fit the library refuses (one class only) shows its code; the fitted head stays in use.
  for (const i of [0, 2, 4, 6, 8]) await byTestId(page, `otke-label-${i}-${promoter}`).click(); // un-label the promoters
  const fit1 = await state(page, 'otke-fit-status');
  await byTestId(page, 'otke-fit-head').click();
  const refused = await settled(page, 'otke-fit-status', fit1.seq, 'fit with one class');
  check(refused.state === 'error', `a fit with one class should fail, status: "${refused.text}"`);
  check(
    (await byTestId(page, 'otke-error').isVisible()) && (await text(page, 'otke-error-code')) === 'invalid_argument',
    `the error box should show invalid_argument, shows "${await text(page, 'otke-error-code')}"`,
  );
  log(`one-class fit: error box shows invalid_argument: ${await text(page, 'otke-error-message')}`);

  // Back to the file's head: the original prediction returns.
  await byTestId(page, 'otke-reset-head').click();
  st = await settled(page, 'otke-status', st.seq, 'reset head');
  const reset = await expectPrediction(page, 'first example, file head');
  check(
    JSON.stringify(reset.probs) === JSON.stringify(first.probs),
    'resetting the head should restore the first prediction',
  );
  await learn(page, st, first);
}

/** Waits until the learn card's status leaves "busy"; returns its state and text. */
async function learnSettled(page, what, timeoutMs = 120_000) {
  try {
    await page.waitForFunction(
      () => {
        const el = document.querySelector('[data-testid="otke-learn-status"]');
        return el && el.dataset.state !== 'busy';
      },
      null,
      { timeout: timeoutMs },
    );
  } catch {
    throw new CheckFailed(
      `${what}: still learning after ${timeoutMs / 1000} s: "${await text(page, 'otke-learn-status')}"`,
    );
  }
  return byTestId(page, 'otke-learn-status').evaluate((el) => ({ state: el.dataset.state, text: el.textContent }));
}

// Learning a whole model in the page: unsupervised on the 300 bundled sequences, a head on 12 labels; the saved
// file is evaluated by the native CLI; then a long run is cancelled and the page keeps working.
async function learn(page, st, first) {
  await byTestId(page, 'otke-learn-examples').click();
  const data = await byTestId(page, 'otke-learn-data').inputValue();
  check(
    (data.match(/^>/gm) ?? []).length === 300 && (data.match(/label=/g) ?? []).length === 12,
    'the bundled examples should be 300 sequences, 12 of them labelled',
  );
  await byTestId(page, 'otke-learn').click();
  const done = await learnSettled(page, 'learn');
  check(done.state === 'done', `learning should succeed: "${done.text}"`);
  check(
    /Learnt from 300 sequences \(12 labelled\)/.test(done.text) && /training accuracy \d+%/.test(done.text),
    `the learn summary should be shown: "${done.text}"`,
  );
  log(`learn: ${done.text}`);
  st = await settled(page, 'otke-status', st.seq, 'prediction with the learnt model');
  const learnt = await expectPrediction(page, 'first example, learnt model');
  check(JSON.stringify(learnt.probs) !== JSON.stringify(first.probs), 'the learnt model should predict differently');
  check(/learnt here/.test(await text(page, 'otke-head-note')), 'the head note should say the model was learnt here');
  await page.screenshot({ path: join(shotDir, 'demo-otke-learn.png'), fullPage: true });

  const [download] = await Promise.all([page.waitForEvent('download'), byTestId(page, 'otke-learn-save').click()]);
  check(download.suggestedFilename() === 'otke-learnt.safetensors', `the download is ${download.suggestedFilename()}`);
  const file = await download.path();
  const promoters = join(repoRoot, 'data', 'promoters');
  const report = JSON.parse(
    execFileSync(
      CLI,
      [
        'otke',
        'eval',
        '--quiet',
        '--model',
        file,
        '--class',
        `promoter=${join(promoters, 'ecoli_prom_150.fa')}`,
        '--class',
        `non_promoter=${join(promoters, 'ecoli_non_prom_150.fa')}`,
      ],
      { encoding: 'utf8' },
    ),
  );
  check(report.accuracy > 0.7, `the native CLI should evaluate the learnt model well: accuracy ${report.accuracy}`);
  log(
    `native CLI: otke eval of the learnt model: accuracy ${report.accuracy.toFixed(3)}, auROC ${report.auroc.toFixed(3)}`,
  );

  // A long run (3000 sequences, 256 anchors on 10-mers), cancelled once progress shows.
  await byTestId(page, 'otke-learn-data').evaluate((el, text) => {
    el.value = text;
  }, Array(10).fill(data).join('\n'));
  await byTestId(page, 'otke-learn-k').fill('10');
  await byTestId(page, 'otke-learn-anchors').fill('256');
  await byTestId(page, 'otke-learn-p').fill('64');
  await byTestId(page, 'otke-learn').click();
  await page.waitForFunction(
    () =>
      document.querySelector('[data-testid="otke-learn-progress"]')?.dataset.stage !== undefined &&
      document.querySelector('[data-testid="otke-learn-progress"]').value > 0,
    null,
    { timeout: TIMEOUT_MS },
  );
  const clicked = Date.now();
  await byTestId(page, 'otke-learn-cancel').click();
  const cancelled = await learnSettled(page, 'cancel', TIMEOUT_MS);
  check(cancelled.state === 'cancelled', `the long run should end cancelled: "${cancelled.text}"`);
  log(`cancel: ${cancelled.text} (${Date.now() - clicked} ms after the click)`);
  await byTestId(page, 'otke-example').selectOption({ index: 1 });
  st = await settled(page, 'otke-status', st.seq, 'after cancel');
  await expectPrediction(page, 'second example after the cancel');
  await byTestId(page, 'otke-example').selectOption({ index: 0 });
  st = await settled(page, 'otke-status', st.seq, 'first example after the cancel');
  const again = await expectPrediction(page, 'first example after the cancel');
  const isolated = await page.evaluate(() => self.crossOriginIsolated);
  // Shared memory: the library call stopped and the learnt model stayed. Otherwise the worker was restarted.
  const expected = isolated ? learnt.probs : first.probs;
  check(
    JSON.stringify(again.probs) === JSON.stringify(expected),
    `after the cancel the ${isolated ? 'learnt' : "file's"} model should be in use`,
  );
}

runDemoTest({
  name: 'otke e2e',
  shot: 'demo-otke-failure.png',
  timeoutMs: TIMEOUT_MS,
  acceptDownloads: true,
  // The blob: URL of a download is revoked by the page once the browser has it; that is not a failure.
  ignoreFailedRequest: (u) => u.startsWith('blob:'),
  body: async ({ context, page, url }) => {
    await run(page, url);
    log(`screenshots in ${shotDir} (demo-otke.png, demo-otke-error.png, demo-otke-learn.png)`);
  },
});
