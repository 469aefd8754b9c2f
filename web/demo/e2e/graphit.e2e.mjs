// End-to-end test of the "Molecules (GraphiT)" panel of the built demo in Debian Chromium (playwright-core).
//
//   npm run build --workspace web/demo && npm run test:e2e --workspace web/demo   (runs every e2e script in turn)
//
// Serves web/demo/dist as plain static files (DEMO_DIST: another build folder; DEMO_URL: a running server), opens
// the panel and checks what a user sees: the default example (2-nitronaphthalene) gets the probability the native
// CLI computes (tests/data/graphit), RDKit draws it with every atom highlighted, moving the layer slider recolours
// the atoms and redraws the attention heatmap, both heatmaps have n x n cells, an invalid SMILES and an unknown atom
// show the library's error code and message and the page goes on working, and nothing is logged as an error.
// Screenshots: build/screenshots/demo-graphit*.png.

import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckFailed, check, runDemoTest, shotDir } from './harness.mjs';

const TIMEOUT_MS = 30_000;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const REFERENCE = join(repoRoot, 'tests/data/graphit/predict.json');

const log = (msg) => console.log(`graphit e2e: ${msg}`);
const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();
const state = (page) => byTestId(page, 'graphit-status').evaluate((el) => ({
  state: el.dataset.state, seq: Number(el.dataset.seq), text: el.textContent,
}));

/** Waits until the panel's status settles (done or error) past `afterSeq`. */
async function settled(page, afterSeq, what) {
  try {
    await page.waitForFunction((prev) => {
      const el = document.querySelector('[data-testid="graphit-status"]');
      return el && Number(el.dataset.seq) > prev && (el.dataset.state === 'done' || el.dataset.state === 'error');
    }, afterSeq, { timeout: TIMEOUT_MS });
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
    await page.waitForFunction((count) => {
      const el = document.querySelector('[data-testid="graphit-molecule"]');
      return el && el.dataset.drawn === 'true' && Number(el.dataset.highlighted) === count;
    }, n, { timeout: TIMEOUT_MS });
  } catch {
    throw new CheckFailed(`${what}: the molecule should be drawn with ${n} highlighted atoms `
      + `(drawn ${await molecule.getAttribute('data-drawn')}, highlighted ${await molecule.getAttribute('data-highlighted')}, `
      + `note "${await text(page, 'graphit-molecule-note')}")`);
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
  check(await plot.getAttribute('data-drawn') === 'true', `${what}: ${id} should be drawn`);
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
    throw new CheckFailed(`${what}: error box shows ${await text(page, 'graphit-error-code')}: ${await text(page, 'graphit-error-message')}`);
  }
  check(st.state === 'done', `${what}: status should be "done", is "${st.state}"`);
  check(await byTestId(page, 'graphit-error').isHidden(), `${what}: the error box should be hidden`);
  const p = [0, 1].map(async (c) => Number(await byTestId(page, `graphit-prob-${c}`).getAttribute('data-value')));
  const probabilities = await Promise.all(p);
  check(Math.abs(probabilities[0] + probabilities[1] - 1) < 1e-5, `${what}: probabilities should sum to 1: ${probabilities}`);
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

async function run(page, url) {
  const native = JSON.parse(await readFile(REFERENCE, 'utf8')).graphs;
  await page.goto(`${url}#graphit`);
  check(await page.getByRole('tab', { name: 'Molecules (GraphiT)' }).getAttribute('aria-selected') === 'true',
    'the "Molecules (GraphiT)" tab should exist and be selected by #graphit');

  // The default example: 2-nitronaphthalene, 13 atoms; the native CLI's probability.
  let st = await settled(page, 0, 'default example');
  check(await byTestId(page, 'graphit-smiles').inputValue() === native[0].name,
    `the default SMILES should be the reference's first molecule ${native[0].name}`);
  const first = await expectResult(page, 'default example', 13);
  const diff = Math.max(...first.probabilities.map((v, c) => Math.abs(v - native[0].probabilities[c])));
  check(diff <= 1e-3, `default example: probabilities ${first.probabilities} should equal the native CLI's `
    + `${native[0].probabilities} (diff ${diff})`);
  check(first.label === native[0].prediction, `default example: predicted "${first.label}", native "${native[0].prediction}"`);
  check(await text(page, 'graphit-layer-label') === 'mean over layers', 'the slider should start on the mean over layers');
  log(`2-nitronaphthalene: ${first.label} (${first.probabilities.map((v) => v.toFixed(4)).join(', ')}; native `
    + `${native[0].probabilities.map((v) => v.toFixed(4)).join(', ')}), ${first.colours.length} atoms coloured, `
    + `${first.attention.length} attention cells`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit.png'), fullPage: true });

  // Layer 1: other colours on the molecule and another attention matrix; the prediction stays.
  await setLayer(page, 1);
  check(await text(page, 'graphit-layer-label') === 'layer 1 of 3', `the slider label should say layer 1 of 3: "${await text(page, 'graphit-layer-label')}"`);
  await page.waitForFunction((before) => {
    const el = document.querySelector('[data-testid="graphit-molecule"]');
    const fills = [...(el?.querySelectorAll('svg ellipse') ?? [])].map((e) => /fill:(#[0-9A-Fa-f]{6})/.exec(e.getAttribute('style') ?? '')?.[1]?.toUpperCase());
    return fills.length === before.length && fills.some((f, i) => f !== before[i]);
  }, first.colours, { timeout: TIMEOUT_MS }).catch(() => {
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
  await page.waitForFunction(() => document.querySelector('[data-testid="graphit-layer-label"]')?.textContent === 'layer 3 of 3');
  log(`layer 3: ${layer3.filter((c, i) => c !== layer1[i]).length} atom colours differ from layer 1`);
  await setLayer(page, 4);
  check(await text(page, 'graphit-layer-label') === 'mean over layers', 'the last slider position should be the mean');

  // An invalid SMILES: invalid_argument with the position; the page keeps working.
  const smiles = byTestId(page, 'graphit-smiles');
  await smiles.fill('C(C');
  st = await settled(page, first.seq, 'invalid SMILES');
  check(st.state === 'error', `an invalid SMILES should fail, status: "${st.text}"`);
  check(await byTestId(page, 'graphit-error').isVisible(), 'the error box should be visible');
  let code = await text(page, 'graphit-error-code');
  let message = await text(page, 'graphit-error-message');
  check(code === 'invalid_argument' && message.startsWith('smiles:'),
    `an invalid SMILES should show invalid_argument from the parser: "${code}": "${message}"`);
  check(await byTestId(page, 'graphit-molecule').getAttribute('data-drawn') === 'false', 'no molecule should be drawn');
  log(`invalid SMILES: error box shows ${code}: ${message}`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-error.png'), fullPage: true });

  // An atom the model does not know: the vocabulary in the message.
  await smiles.fill('CS');
  st = await settled(page, st.seq, 'unknown atom');
  code = await text(page, 'graphit-error-code');
  message = await text(page, 'graphit-error-message');
  check(st.state === 'error' && code === 'invalid_argument' && message.includes('atom 2 is S')
    && message.includes('C, N, O, F, I, Cl, Br'),
  `an unknown atom should name it and the vocabulary: "${code}": "${message}"`);
  log(`unknown atom: error box shows ${code}: ${message}`);

  // Back to work: benzidine from the picker (the reference's second molecule).
  await byTestId(page, 'graphit-example').selectOption({ label: 'benzidine (aromatic amine)' });
  st = await settled(page, st.seq, 'benzidine');
  const benzidine = await expectResult(page, 'benzidine', 14);
  const d2 = Math.max(...benzidine.probabilities.map((v, c) => Math.abs(v - native[1].probabilities[c])));
  check(d2 <= 1e-3, `benzidine: probabilities ${benzidine.probabilities} should equal the native ${native[1].probabilities}`);
  log(`benzidine: ${benzidine.label} (${benzidine.probabilities.map((v) => v.toFixed(4)).join(', ')}), 14 atoms coloured`);

  // A typed molecule: glycerol (simple alcohol).
  await smiles.fill('OCC(O)CO');
  st = await settled(page, st.seq, 'glycerol');
  const glycerol = await expectResult(page, 'glycerol', 6);
  log(`glycerol: ${glycerol.label} (${glycerol.probabilities.map((v) => v.toFixed(4)).join(', ')})`);
  await page.screenshot({ path: join(shotDir, 'demo-graphit-typed.png'), fullPage: true });
}

runDemoTest({
  name: 'graphit e2e',
  shot: 'demo-graphit-failure.png',
  timeoutMs: TIMEOUT_MS,
  body: async ({ page, url }) => {
    await run(page, url);
    log(`screenshots in ${shotDir} (demo-graphit.png, demo-graphit-layer1.png, demo-graphit-error.png, demo-graphit-typed.png)`);
  },
});
