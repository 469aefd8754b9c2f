// End-to-end test of the "Molecules (GraphiT)" panel of the built demo in Debian Chromium (playwright-core).
//
//   npm run build --workspace web/demo && npm run test:e2e --workspace web/demo   (runs every e2e script in turn)
//
// Serves web/demo/dist as plain static files (DEMO_DIST: another build folder; DEMO_URL: a running server), opens
// the panel and checks what a user sees: the default example (2-nitronaphthalene) gets the probability the native
// CLI computes (tests/data/graphit), RDKit draws it with every atom highlighted, moving the layer slider recolours
// the atoms and redraws the attention heatmap, both heatmaps have n x n cells, an invalid SMILES and an unknown atom
// show the library's error code and message and the page goes on working, and nothing is logged as an error.
// Benzidine's last layer shows the visualisation study's finding (its amine N the most salient atom) with the CLI's
// number at the top of the colour scale.
// Then the few-labels card: the 40 BBBP examples refit the output layer (status "done" with a training accuracy,
// the prediction now in the classes permeable / non-permeable), the saved model is read by the native CLI (which
// must give the page's probabilities), a one-class CSV and a malformed line fail with their code, a long refit
// (1000 molecules) is cancelled once it reports progress and the page goes on working (analysis, refit, reset).
// Screenshots: build/screenshots/demo-graphit*.png.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailed, check, runDemoTest, shotDir } from './harness.mjs';

const TIMEOUT_MS = 30_000;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const REFERENCE = join(repoRoot, 'tests/data/graphit/predict.json');
const CLI = join(repoRoot, 'build/native-release/bin/inductive');

const log = (msg) => console.log(`graphit e2e: ${msg}`);
const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();
const state = (page) =>
  byTestId(page, 'graphit-status').evaluate((el) => ({
    state: el.dataset.state,
    seq: Number(el.dataset.seq),
    text: el.textContent,
  }));

/** Waits until the panel's status settles (done or error) past `afterSeq`. */
async function settled(page, afterSeq, what) {
  try {
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="graphit-status"]');
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

/** The fill colours of RDKit's highlighted atoms (ellipse.atom-i), once the drawing shows `n` highlighted atoms. */
async function atomColours(page, n, what) {
  const molecule = byTestId(page, 'graphit-molecule');
  try {
    await page.waitForFunction(
      (count) => {
        const el = document.querySelector('[data-testid="graphit-molecule"]');
        return el && el.dataset.drawn === 'true' && Number(el.dataset.highlighted) === count;
      },
      n,
      { timeout: TIMEOUT_MS },
    );
  } catch {
    throw new CheckFailed(
      `${what}: the molecule should be drawn with ${n} highlighted atoms ` +
        `(drawn ${await molecule.getAttribute('data-drawn')}, highlighted ${await molecule.getAttribute('data-highlighted')}, ` +
        `note "${await text(page, 'graphit-molecule-note')}")`,
    );
  }
  return molecule.evaluate((el) => {
    const colours = new Map();
    for (const e of el.querySelectorAll('svg ellipse')) {
      const m = /(?:^|\s)atom-(\d+)/.exec(e.getAttribute('class') ?? '');
      const fill = /fill:(#[0-9A-Fa-f]{6})/.exec(e.getAttribute('style') ?? '');
      if (m && fill) colours.set(Number(m[1]), fill[1].toUpperCase());
    }
    return [...colours.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
  });
}

/** Cells of a heatmap and their fills; checks it is n x n. */
async function heatmap(page, id, n, what) {
  const plot = byTestId(page, id);
  check((await plot.getAttribute('data-drawn')) === 'true', `${what}: ${id} should be drawn`);
  check(Number(await plot.getAttribute('data-n')) === n, `${what}: ${id} should be for ${n} atoms`);
  const fills = await plot.locator('rect.cell').evaluateAll((cells) => cells.map((c) => c.getAttribute('fill')));
  check(fills.length === n * n, `${what}: ${id} should have ${n} x ${n} = ${n * n} cells, has ${fills.length}`);
  const labels = await plot.locator('.axis.rows text').count();
  check(labels === n, `${what}: ${id} should label its ${n} rows with atoms, has ${labels}`);
  return fills;
}

async function expectResult(page, what, n) {
  const st = await state(page);
  if (st.state === 'error') {
    throw new CheckFailed(
      `${what}: error box shows ${await text(page, 'graphit-error-code')}: ${await text(page, 'graphit-error-message')}`,
    );
  }
  check(st.state === 'done', `${what}: status should be "done", is "${st.state}"`);
  check(await byTestId(page, 'graphit-error').isHidden(), `${what}: the error box should be hidden`);
  const p = [0, 1].map(async (c) => Number(await byTestId(page, `graphit-prob-${c}`).getAttribute('data-value')));
  const probabilities = await Promise.all(p);
  check(
    Math.abs(probabilities[0] + probabilities[1] - 1) < 1e-5,
    `${what}: probabilities should sum to 1: ${probabilities}`,
  );
  const colours = await atomColours(page, n, what);
  check(colours.length === n, `${what}: RDKit's SVG should colour ${n} atoms, colours ${colours.length}`);
  const attention = await heatmap(page, 'graphit-attention', n, what);
  await heatmap(page, 'graphit-kernel', n, what);
  return { probabilities, colours, attention, label: await text(page, 'graphit-predicted-label'), seq: st.seq };
}

async function setLayer(page, value) {
  await byTestId(page, 'graphit-layer').evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

/** The float32 values of a .npy file written by the CLI (little-endian '<f4'). */
function readNpyF32(bytes) {
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  check(header.includes("'<f4'"), `the CLI's .npy should hold float32: ${header.trim()}`);
  const data = bytes.subarray(10 + headerLength);
  return Array.from({ length: data.length / 4 }, (_, i) => data.readFloatLE(4 * i));
}

const refitState = (page) =>
  byTestId(page, 'graphit-refit-status').evaluate((el) => ({
    state: el.dataset.state,
    seq: Number(el.dataset.seq),
    text: el.textContent,
  }));

/** Waits until the refit card's status settles (any state but busy) past `afterSeq`. */
async function refitSettled(page, afterSeq, what, timeout = TIMEOUT_MS) {
  try {
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('[data-testid="graphit-refit-status"]');
        return el && Number(el.dataset.seq) > prev && el.dataset.state !== 'busy';
      },
      afterSeq,
      { timeout },
    );
  } catch {
    const now = await refitState(page);
    throw new CheckFailed(`${what}: the refit card did not settle within ${timeout} ms (${now.state}, "${now.text}")`);
  }
  return refitState(page);
}

const barLabels = (page) => byTestId(page, 'graphit-probabilities').locator('.graphit-bar-label').allTextContents();

/** Fills the card with the 40 BBBP examples; returns their lines. */
async function useExamples(page) {
  const before = await refitState(page);
  await byTestId(page, 'graphit-refit-examples').click();
  const st = await refitSettled(page, before.seq, 'examples');
  check(st.state === 'idle', `the examples should load: ${st.state}, "${st.text}"`);
  const lines = (await byTestId(page, 'graphit-refit-data').inputValue()).split('\n');
  const permeable = lines.filter((l) => l.endsWith(',permeable')).length;
  const other = lines.filter((l) => l.endsWith(',non-permeable')).length;
  check(
    lines.length === 40 && permeable === 20 && other === 20,
    `the examples should be 20 permeable + 20 non-permeable lines: ${lines.length} lines, ${permeable} + ${other}`,
  );
  return { lines, text: st.text };
}

/** Clicks "Refit head" and waits for the card and then the re-run analysis to settle. */
async function refitAndAnalyse(page, mainSeq, what) {
  const before = await refitState(page);
  const t0 = Date.now();
  await byTestId(page, 'graphit-refit').click();
  const st = await refitSettled(page, before.seq, what);
  const wallMs = Date.now() - t0;
  check(st.state === 'done', `${what}: the refit should succeed: ${st.state}, "${st.text}"`);
  check(
    /training accuracy \d+%/.test(st.text) && /20 permeable \+ 20 non-permeable/.test(st.text),
    `${what}: the status should report the classes and a training accuracy: "${st.text}"`,
  );
  const main = await settled(page, mainSeq, `${what}: analysis with the refitted head`);
  return { st, wallMs, main };
}

/** Saves the current model, and has the native CLI predict with the file. */
async function saveAndPredict(page, glycerolProbabilities) {
  const [download] = await Promise.all([page.waitForEvent('download'), byTestId(page, 'graphit-refit-save').click()]);
  check(
    download.suggestedFilename() === 'graphit-refit.safetensors',
    `the download should be graphit-refit.safetensors, is ${download.suggestedFilename()}`,
  );
  check(existsSync(CLI), `the native CLI ${CLI} is missing: build the native-release preset first`);
  const dir = await mkdtemp(join(tmpdir(), 'graphit-refit-'));
  try {
    const model = join(dir, 'graphit-refit.safetensors');
    await download.saveAs(model);
    const size = (await readFile(model)).length;
    const out = join(dir, 'ethanol.npy');
    const t0 = Date.now();
    try {
      execFileSync(CLI, ['graphit', 'predict', '--model', model, '--smiles', 'CCO', '--out', out], { stdio: 'pipe' });
    } catch (err) {
      throw new CheckFailed(`the CLI should read the saved model: exit ${err.status}: ${err.stderr}`);
    }
    const cliMs = Date.now() - t0;
    const ethanol = readNpyF32(await readFile(out));
    check(
      ethanol.length === 2 && Math.abs(ethanol[0] + ethanol[1] - 1) < 1e-5,
      `the CLI's ethanol prediction should be 2 probabilities summing to 1: ${ethanol}`,
    );
    // The same file must give the page's prediction for the molecule on screen, in the refitted classes.
    const report = join(dir, 'glycerol.json');
    execFileSync(
      CLI,
      ['graphit', 'predict', '--model', model, '--smiles', 'OCC(O)CO', '--out', join(dir, 'g.npy'), '--report', report],
      { stdio: 'pipe' },
    );
    const glycerol = JSON.parse(await readFile(report, 'utf8')).graphs[0];
    const diff = Math.max(...glycerol.probabilities.map((v, c) => Math.abs(v - glycerolProbabilities[c])));
    check(
      diff <= 1e-4 && /permeable/.test(glycerol.prediction),
      `the CLI should predict glycerol as the page does: ${glycerol.prediction} ${glycerol.probabilities} vs page ` +
        `${glycerolProbabilities} (diff ${diff})`,
    );
    log(
      `saved ${download.suggestedFilename()} (${size} bytes); CLI: exit 0 in ${cliMs} ms, ethanol ` +
        `${ethanol.map((v) => v.toFixed(4)).join(', ')}; glycerol ${glycerol.prediction} (diff to the page ${diff.toExponential(1)})`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function refitCard(page, mainSeq, fileGlycerol) {
  const data = byTestId(page, 'graphit-refit-data');
  const cancelMode = await page.locator('.graphit-refit').getAttribute('data-cancel-mode');
  check(await byTestId(page, 'graphit-refit-cancel').isDisabled(), 'Cancel should be disabled while nothing runs');
  check(
    await byTestId(page, 'graphit-refit-reset').isDisabled(),
    '"Use the file\'s head" should be disabled before a refit',
  );

  // The 40 BBBP examples: refit, and glycerol (on screen) is re-analysed in the new classes.
  const examples = await useExamples(page);
  log(`examples: ${examples.text}`);
  const fit = await refitAndAnalyse(page, mainSeq, 'refit on 40 BBBP molecules');
  const refitted = await expectResult(page, 'glycerol, refitted head', 6);
  const labels = await barLabels(page);
  check(
    JSON.stringify(labels) === JSON.stringify(['permeable', 'non-permeable']),
    `the prediction should now show the classes permeable / non-permeable: ${labels}`,
  );
  check(/refitted/.test(await text(page, 'graphit-details')), 'the details should say the output layer was refitted');
  check(await byTestId(page, 'graphit-refit-progress').isHidden(), 'the progress bar should go away once done');
  log(`refit (page, ${fit.wallMs} ms click to done): ${fit.st.text}`);
  log(`glycerol, refitted head: ${refitted.label} (${refitted.probabilities.map((v) => v.toFixed(4)).join(', ')})`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-refit.png'), fullPage: true });
  await saveAndPredict(page, refitted.probabilities);
  mainSeq = refitted.seq;

  // Refits the library (or the page's CSV reader) refuses: the code in the status line; the refit stays in use.
  for (const [what, csv, code, fragment] of [
    ['one class only', examples.lines.slice(0, 20).join('\n'), 'invalid_argument', 'need at least 2 classes'],
    ['a line without a label', 'CCO,a\nOCC(O)CO', 'invalid_argument', 'line 2'],
  ]) {
    await data.fill(csv);
    const before = await refitState(page);
    await byTestId(page, 'graphit-refit').click();
    const st = await refitSettled(page, before.seq, what);
    const shown = await text(page, 'graphit-refit-error-code');
    check(
      st.state === 'error' && shown === code && st.text.includes(code) && st.text.includes(fragment),
      `${what}: the status should be an error with ${code} and "${fragment}": ${st.state}, "${st.text}"`,
    );
    check(await byTestId(page, 'graphit-refit-reset').isEnabled(), `${what}: the earlier refit should stay in use`);
    log(`${what}: ${st.text}`);
  }

  // Cancel: 1000 lines (the examples 25 times), cancelled as soon as the bar shows progress.
  await data.fill(
    Array.from({ length: 25 }, () => examples.lines)
      .flat()
      .join('\n'),
  );
  const before = await refitState(page);
  const t0 = Date.now();
  await byTestId(page, 'graphit-refit').click();
  check(await byTestId(page, 'graphit-refit-cancel').isEnabled(), 'Cancel should be enabled while the refit runs');
  try {
    await page.waitForFunction(
      () => {
        const el = document.querySelector('[data-testid="graphit-refit-progress"]');
        return (
          (el && el.dataset.stage !== undefined) ||
          document.querySelector('[data-testid="graphit-refit-status"]')?.dataset.state !== 'busy'
        );
      },
      null,
      { timeout: TIMEOUT_MS, polling: 'raf' },
    );
  } catch {
    throw new CheckFailed('the long refit should report progress');
  }
  const at = await byTestId(page, 'graphit-refit-progress').evaluate((el) => ({
    stage: el.dataset.stage,
    value: el.value,
  }));
  const progressMs = Date.now() - t0;
  check(at.stage !== undefined, `the long refit ended before it showed progress: "${(await refitState(page)).text}"`);
  const t1 = Date.now();
  await byTestId(page, 'graphit-refit-cancel').click();
  const cancelled = await refitSettled(page, before.seq, 'cancel');
  const cancelMs = Date.now() - t1;
  check(
    cancelled.state === 'cancelled',
    `the cancelled refit should end "cancelled" (it may have finished first), is ${cancelled.state}: "${cancelled.text}"`,
  );
  check(await byTestId(page, 'graphit-refit-cancel').isDisabled(), 'Cancel should be disabled again');
  check(await byTestId(page, 'graphit-refit').isEnabled(), 'Refit should be enabled again');
  log(
    `cancel (${cancelMode}): progress "${at.stage}" ${(100 * at.value).toFixed(0)}% after ${progressMs} ms, ` +
      `cancelled ${cancelMs} ms after the click: ${cancelled.text}`,
  );

  // The page still works: a molecule from the picker is analysed (with the file's head once the worker restarted).
  let st = await state(page);
  await byTestId(page, 'graphit-example').selectOption({ label: 'benzyl alcohol (simple alcohol)' });
  st = await settled(page, st.seq, 'benzyl alcohol after the cancel');
  const benzyl = await expectResult(page, 'benzyl alcohol after the cancel', 8);
  const afterCancel = await barLabels(page);
  const expected = cancelMode === 'restart-worker' ? ['non-mutagenic', 'mutagenic'] : ['permeable', 'non-permeable'];
  check(
    JSON.stringify(afterCancel) === JSON.stringify(expected),
    `after the cancel (${cancelMode}) the classes should be ${expected}: ${afterCancel}`,
  );
  log(`benzyl alcohol after the cancel: ${benzyl.label} (${benzyl.probabilities.map((v) => v.toFixed(4)).join(', ')})`);

  // Refit again, then back to the file's head: glycerol gets the file head's probabilities again.
  await useExamples(page);
  ({ main: st } = await refitAndAnalyse(page, st.seq, 'refit after the cancel'));
  await byTestId(page, 'graphit-smiles').fill('OCC(O)CO');
  st = await settled(page, st.seq, 'glycerol, refitted again');
  check(
    JSON.stringify(await barLabels(page)) === JSON.stringify(['permeable', 'non-permeable']),
    'glycerol should be predicted with the refitted classes again',
  );
  const r0 = await refitState(page);
  await byTestId(page, 'graphit-refit-reset').click();
  const reset = await refitSettled(page, r0.seq, 'reset');
  check(reset.state === 'done' && /file/.test(reset.text), `reset should succeed: ${reset.state}, "${reset.text}"`);
  await settled(page, st.seq, "glycerol with the file's head");
  const back = await expectResult(page, "glycerol with the file's head", 6);
  check(
    JSON.stringify(await barLabels(page)) === JSON.stringify(['non-mutagenic', 'mutagenic']),
    `after the reset the classes should be the file's: ${await barLabels(page)}`,
  );
  check(
    JSON.stringify(back.probabilities) === JSON.stringify(fileGlycerol),
    `after the reset glycerol should get the file head's probabilities ${fileGlycerol}: ${back.probabilities}`,
  );
  check(
    await byTestId(page, 'graphit-refit-reset').isDisabled(),
    '"Use the file\'s head" should be disabled after the reset',
  );
  log(`reset: ${reset.text} glycerol: ${back.label} (${back.probabilities.map((v) => v.toFixed(4)).join(', ')})`);
}

async function run(page, url) {
  const native = JSON.parse(await readFile(REFERENCE, 'utf8')).graphs;
  await page.goto(`${url}#graphit`);
  check(
    (await page.getByRole('tab', { name: 'Molecules (GraphiT)' }).getAttribute('aria-selected')) === 'true',
    'the "Molecules (GraphiT)" tab should exist and be selected by #graphit',
  );

  // The default example: 2-nitronaphthalene, 13 atoms; the native CLI's probability.
  let st = await settled(page, 0, 'default example');
  check(
    (await byTestId(page, 'graphit-smiles').inputValue()) === native[0].name,
    `the default SMILES should be the reference's first molecule ${native[0].name}`,
  );
  const first = await expectResult(page, 'default example', 13);
  const diff = Math.max(...first.probabilities.map((v, c) => Math.abs(v - native[0].probabilities[c])));
  check(
    diff <= 1e-3,
    `default example: probabilities ${first.probabilities} should equal the native CLI's ` +
      `${native[0].probabilities} (diff ${diff})`,
  );
  check(
    first.label === native[0].prediction,
    `default example: predicted "${first.label}", native "${native[0].prediction}"`,
  );
  check(
    (await text(page, 'graphit-layer-label')) === 'mean over layers',
    'the slider should start on the mean over layers',
  );
  log(
    `2-nitronaphthalene: ${first.label} (${first.probabilities.map((v) => v.toFixed(4)).join(', ')}; native ` +
      `${native[0].probabilities.map((v) => v.toFixed(4)).join(', ')}), ${first.colours.length} atoms coloured, ` +
      `${first.attention.length} attention cells`,
  );
  await page.screenshot({ path: join(shotDir, 'demo-graphit.png'), fullPage: true });

  // Layer 1: other colours on the molecule and another attention matrix; the prediction stays.
  await setLayer(page, 1);
  check(
    (await text(page, 'graphit-layer-label')) === 'layer 1 of 3',
    `the slider label should say layer 1 of 3: "${await text(page, 'graphit-layer-label')}"`,
  );
  await page
    .waitForFunction(
      (before) => {
        const el = document.querySelector('[data-testid="graphit-molecule"]');
        const fills = [...(el?.querySelectorAll('svg ellipse') ?? [])].map((e) =>
          /fill:(#[0-9A-Fa-f]{6})/.exec(e.getAttribute('style') ?? '')?.[1]?.toUpperCase(),
        );
        return fills.length === before.length && fills.some((f, i) => f !== before[i]);
      },
      first.colours,
      { timeout: TIMEOUT_MS },
    )
    .catch(() => {
      throw new CheckFailed('moving the layer slider to 1 should recolour the atoms');
    });
  const layer1 = await atomColours(page, 13, 'layer 1');
  const changed = layer1.filter((c, i) => c !== first.colours[i]).length;
  const attention1 = await heatmap(page, 'graphit-attention', 13, 'layer 1');
  const cellsChanged = attention1.filter((c, i) => c !== first.attention[i]).length;
  check(cellsChanged > 0, 'layer 1: the attention heatmap should change');
  log(`layer 1: ${changed} of 13 atom colours and ${cellsChanged} of 169 attention cells changed`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-layer1.png'), fullPage: true });
  await setLayer(page, 3);
  const layer3 = await atomColours(page, 13, 'layer 3');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="graphit-layer-label"]')?.textContent === 'layer 3 of 3',
  );
  log(`layer 3: ${layer3.filter((c, i) => c !== layer1[i]).length} atom colours differ from layer 1`);
  await setLayer(page, 4);
  check(
    (await text(page, 'graphit-layer-label')) === 'mean over layers',
    'the last slider position should be the mean',
  );

  // An invalid SMILES: invalid_argument with the position; the page keeps working.
  const smiles = byTestId(page, 'graphit-smiles');
  await smiles.fill('C(C');
  st = await settled(page, first.seq, 'invalid SMILES');
  check(st.state === 'error', `an invalid SMILES should fail, status: "${st.text}"`);
  check(await byTestId(page, 'graphit-error').isVisible(), 'the error box should be visible');
  let code = await text(page, 'graphit-error-code');
  let message = await text(page, 'graphit-error-message');
  check(
    code === 'invalid_argument' && message.startsWith('smiles:'),
    `an invalid SMILES should show invalid_argument from the parser: "${code}": "${message}"`,
  );
  check(
    (await byTestId(page, 'graphit-molecule').getAttribute('data-drawn')) === 'false',
    'no molecule should be drawn',
  );
  log(`invalid SMILES: error box shows ${code}: ${message}`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-error.png'), fullPage: true });

  // An atom the model does not know: the vocabulary in the message.
  await smiles.fill('CS');
  st = await settled(page, st.seq, 'unknown atom');
  code = await text(page, 'graphit-error-code');
  message = await text(page, 'graphit-error-message');
  check(
    st.state === 'error' &&
      code === 'invalid_argument' &&
      message.includes('atom 2 is S') &&
      message.includes('C, N, O, F, I, Cl, Br'),
    `an unknown atom should name it and the vocabulary: "${code}": "${message}"`,
  );
  log(`unknown atom: error box shows ${code}: ${message}`);

  // Back to work: benzidine from the picker (the reference's second molecule).
  await byTestId(page, 'graphit-example').selectOption({ label: 'benzidine (aromatic amine)' });
  st = await settled(page, st.seq, 'benzidine');
  const benzidine = await expectResult(page, 'benzidine', 14);
  const d2 = Math.max(...benzidine.probabilities.map((v, c) => Math.abs(v - native[1].probabilities[c])));
  check(
    d2 <= 1e-3,
    `benzidine: probabilities ${benzidine.probabilities} should equal the native ${native[1].probabilities}`,
  );
  log(
    `benzidine: ${benzidine.label} (${benzidine.probabilities.map((v) => v.toFixed(4)).join(', ')}), 14 atoms coloured`,
  );
  // The visualisation study (bench/README.md): in the last layer the amine N is the most salient atom, at 3x the
  // mean. The page's colour scale must end at the CLI's saliency of that atom (tests/data/graphit/attention-1).
  await setLayer(page, 3);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="graphit-layer-label"]')?.textContent === 'layer 3 of 3',
  );
  const saliency = readNpyF32(await readFile(join(repoRoot, 'tests/data/graphit/attention-1/saliency.npy')));
  const atoms = JSON.parse(await readFile(join(repoRoot, 'tests/data/graphit/attention-1/summary.json'), 'utf8')).nodes;
  const last = saliency.slice(2 * 14, 3 * 14);
  const top = last.indexOf(Math.max(...last));
  const shown = Number(await text(page, 'graphit-saliency-max'));
  check(
    Math.abs(shown - last[top]) <= 5e-3 * last[top],
    `benzidine, layer 3: the colour scale should end at the CLI's largest saliency ${last[top]}, shows ${shown}`,
  );
  check(atoms[top] === 'N', `benzidine, layer 3: the most salient atom should be an amine N, is ${atoms[top]}`);
  log(`benzidine, layer 3: most salient atom ${top} (N), saliency ${shown} = ${(shown * 14).toFixed(2)}x the mean`);
  await setLayer(page, 4);

  // A typed molecule: glycerol (simple alcohol).
  await smiles.fill('OCC(O)CO');
  st = await settled(page, st.seq, 'glycerol');
  const glycerol = await expectResult(page, 'glycerol', 6);
  log(`glycerol: ${glycerol.label} (${glycerol.probabilities.map((v) => v.toFixed(4)).join(', ')})`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-typed.png'), fullPage: true });

  await refitCard(page, glycerol.seq, glycerol.probabilities);
}

runDemoTest({
  name: 'graphit e2e',
  shot: 'demo-graphit-failure.png',
  timeoutMs: TIMEOUT_MS,
  acceptDownloads: true,
  // The blob: URL of a download is revoked by the page once the browser has it; that is not a failure.
  ignoreFailedRequest: (u) => u.startsWith('blob:'),
  body: async ({ page, url }) => {
    await run(page, url);
    log(
      `screenshots in ${shotDir} (demo-graphit.png, demo-graphit-layer1.png, demo-graphit-error.png, ` +
        'demo-graphit-typed.png, demo-graphit-refit.png)',
    );
  },
});
