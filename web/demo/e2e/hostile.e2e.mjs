// Hostile inputs in the browser: what a user finds on the web, given to the demo as a user gives it. Each must end
// in a precise InductiveError in the panel's error box, or complete, with the page responsive meanwhile (the work
// runs in the worker): never a crashed tab, an out-of-memory abort or a frozen page.
//
//   - a SMILES string of 10^5 atoms, and one of 10^4 nested branches: refused by the build's size limit
//     (1024 atoms in wasm) before any work, with the limit in the message;
//   - a 200 MB LIBSVM file dropped on the screening panel: it loads and is screened, or fails with a precise code;
//     the main thread keeps answering within 1 s while the worker parses it.
import { CheckFailed, check, runDemoTest } from './harness.mjs';

const TIMEOUT_MS = 30_000;
const log = (msg) => console.log(`hostile e2e: ${msg}`);
const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);
const text = async (page, id) => ((await byTestId(page, id).textContent()) ?? '').trim();

async function settledPast(page, status, seq, timeoutMs = TIMEOUT_MS) {
  await page.waitForFunction(([id, prev]) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    return el && Number(el.dataset.seq) > prev && (el.dataset.state === 'done' || el.dataset.state === 'error');
  }, [status, seq], { timeout: timeoutMs });
  return byTestId(page, status).evaluate((el) => ({ state: el.dataset.state, seq: Number(el.dataset.seq) }));
}

async function hugeMolecules(page, url) {
  await page.goto(`${url}#graphit`);
  let st = await settledPast(page, 'graphit-status', 0);
  const cases = [
    ['a chain of 10^5 carbons', 'C'.repeat(100_000), 'the molecule has 100000 atoms'],
    ['10^4 nested branches', 'C('.repeat(10_000) + 'C' + ')'.repeat(10_000), 'the molecule has 10001 atoms'],
  ];
  for (const [what, smiles, fragment] of cases) {
    const started = Date.now();
    await byTestId(page, 'graphit-smiles').fill(smiles);
    st = await settledPast(page, 'graphit-status', st.seq);
    check(st.state === 'error', `${what}: should be refused, status ${st.state}`);
    const code = await text(page, 'graphit-error-code');
    const message = await text(page, 'graphit-error-message');
    check(code === 'invalid_argument' && message.includes(fragment) && message.includes('at most 1024 atoms'),
      `${what}: expected invalid_argument naming the 1024-atom limit, got ${code}: ${message.slice(0, 200)}`);
    log(`${what}: refused in ${Date.now() - started} ms: ${code}: ${message}`);
  }
}

async function hugeLibsvm(page) {
  await byTestId(page, 'tab-screening').click();  // the same page: a hash change alone does not reload it
  await settledPast(page, 'screening-status', 0);
  const before = await byTestId(page, 'screening-status').evaluate((el) => Number(el.dataset.seq));
  // 200 MB of LIBSVM written in the page (sending it through the test driver would take minutes), dropped through
  // the file input as a user's drop arrives.
  const mb = await page.evaluate(() => {
    let st = 1;
    const r = () => { st = (Math.imul(st, 1103515245) + 12345) >>> 0; return st / 2 ** 32; };
    const parts = [];
    let size = 0;
    while (size < 200 * 2 ** 20) {
      let line = r() < 0.5 ? '+1' : '-1';
      for (let j = 1; j <= 30; j++) line += ` ${j * 3}:${r().toFixed(4)}`;
      line += '\n';
      parts.push(line);
      size += line.length;
    }
    const file = new File(parts, 'big.svm', { type: 'text/plain' });
    const input = document.querySelector('[data-testid="screening-file"]');
    const dt = new DataTransfer();
    dt.items.add(file);
    input.files = dt.files;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    return Math.round(file.size / 2 ** 20);
  });
  const started = Date.now();
  // While the worker parses and screens, the page must answer.
  let slowest = 0;
  let settled = null;
  while (settled === null && Date.now() - started < 240_000) {
    const t0 = Date.now();
    const s = await page.evaluate((prev) => {
      const el = document.querySelector('[data-testid="screening-status"]');
      return Number(el.dataset.seq) > prev && el.dataset.state !== 'computing' ? el.dataset.state : null;
    }, before);
    slowest = Math.max(slowest, Date.now() - t0);
    settled = s;
    if (settled === null) await new Promise((ok) => setTimeout(ok, 250));
  }
  check(settled !== null, `a ${mb} MB LIBSVM file: no result within 240 s`);
  check(slowest < 1000, `the page froze: a main-thread round trip took ${slowest} ms while the worker was busy`);
  if (settled === 'done') {
    const shape = await byTestId(page, 'screening-shape').evaluate((el) => `${el.dataset.n} x ${el.dataset.p}`);
    log(`a ${mb} MB LIBSVM file: loaded and screened in ${((Date.now() - started) / 1000).toFixed(1)} s (${shape}); `
      + `slowest main-thread round trip ${slowest} ms`);
  } else {
    const code = await text(page, 'screening-error-code');
    check(['out_of_memory', 'invalid_argument'].includes(code), `a ${mb} MB LIBSVM file: unexpected error ${code}`);
    log(`a ${mb} MB LIBSVM file: refused with ${code}: ${await text(page, 'screening-error-message')}`);
  }
}

runDemoTest({
  name: 'hostile e2e',
  shot: 'demo-hostile-failure.png',
  timeoutMs: TIMEOUT_MS,
  body: async ({ page, url }) => {
    try {
      await hugeMolecules(page, url);
      await hugeLibsvm(page);
    } catch (e) {
      if (e instanceof CheckFailed) throw e;
      throw new CheckFailed(String(e?.stack ?? e));
    }
  },
});
