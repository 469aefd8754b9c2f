// The real-browser harness both e2e scripts share: serve web/demo/dist, open it in Debian Chromium through
// playwright-core with a fresh profile, refuse and record any request outside the page's origin, collect console
// errors, page errors and failed requests, save a screenshot on failure, and exit non-zero with a clear message.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startStaticServer } from './static_server.mjs';

const demoDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(demoDir, '..', '..');
export const distDir = process.env.DEMO_DIST ?? join(demoDir, 'dist');
export const shotDir = join(repoRoot, 'build', 'screenshots');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export class CheckFailed extends Error {}
export function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/**
 * Runs `body({ context, page, url, problems })` against the demo (DEMO_URL, or a static server over dist).
 * `name` prefixes log lines; `shot` names the failure screenshot; `acceptDownloads` and `ignoreFailedRequest`
 * (a predicate on URLs) adapt the browser to the panel under test. `problems` must be empty when body returns.
 */
export async function runDemoTest({
  name,
  shot,
  timeoutMs,
  acceptDownloads = false,
  ignoreFailedRequest = () => false,
  isolated = process.env.DEMO_EXPECT_ISOLATED === '1',
  body,
}) {
  const log = (msg) => console.log(`${name}: ${msg}`);
  let server = null;
  const problems = [];
  try {
    const external = process.env.DEMO_URL;
    if (!external) {
      check(
        existsSync(join(distDir, 'index.html')),
        `${distDir}/index.html is missing: run \`npm run build -w inductive-demo\` first`,
      );
    }
    check(existsSync(chromiumPath), `no Chromium at ${chromiumPath} (apt install chromium, or set CHROMIUM)`);
    await mkdir(shotDir, { recursive: true });
    server = external ? null : await startStaticServer(distDir, { isolated });
    const url = external ?? server.url;
    const profile = await mkdtemp(join(tmpdir(), 'inductive-e2e-'));
    let context;
    try {
      context = await chromium.launchPersistentContext(profile, {
        executablePath: chromiumPath,
        headless: true,
        acceptDownloads,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
          '--disable-quic',
          // E2E_CHROMIUM_ARGS: extra switches, space-separated, for experiments (bench/README.md: --js-flags=--no-liftoff).
          ...(process.env.E2E_CHROMIUM_ARGS ?? '').split(' ').filter(Boolean),
        ],
        viewport: { width: 1440, height: 900 },
      });
      // The page must need nothing beyond its own origin: anything else is recorded and refused.
      const origin = new URL(url).origin;
      await context.route('**/*', (route) => {
        const target = route.request().url();
        if (target.startsWith(origin + '/') || target.startsWith('data:') || target.startsWith('blob:')) {
          return route.continue();
        }
        problems.push(`request outside the page's origin: ${target}`);
        return route.abort();
      });
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(timeoutMs);
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
      });
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('requestfailed', (req) => {
        if (!ignoreFailedRequest(req.url()))
          problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`);
      });
      page.on('response', (res) => {
        if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
      });
      log(`testing ${url}`);
      // Served by `npm start` (vite preview, COOP/COEP headers) the page is cross-origin isolated; served as plain
      // static files it is not. Both must work; DEMO_EXPECT_ISOLATED=1 (or `isolated`) says which one this run is.
      const expectIsolated = isolated;
      page.once('load', () => {
        page
          .evaluate(() => self.crossOriginIsolated)
          .then(
            (isolated) => {
              if (isolated !== expectIsolated) {
                problems.push(
                  `the page is ${isolated ? '' : 'not '}cross-origin isolated; expected ${expectIsolated ? '' : 'not '}isolated`,
                );
              }
            },
            () => {},
          );
      });
      try {
        await body({ context, page, url, problems });
      } catch (err) {
        await page.screenshot({ path: join(shotDir, shot), fullPage: true }).catch(() => {});
        throw err;
      }
      check(problems.length === 0, `the page reported problems:\n  ${problems.join('\n  ')}`);
      log('PASS');
    } finally {
      await context?.close();
      await rm(profile, { recursive: true, force: true });
    }
  } catch (err) {
    if (problems.length) console.error(`${name}: also seen:\n  ${problems.join('\n  ')}`);
    if (server) console.error(`${name}: server log:\n  ${server.requests.join('\n  ')}`);
    console.error(`${name}: FAIL: ${err instanceof CheckFailed ? err.message : (err?.stack ?? err)}`);
    process.exitCode = 1;
  } finally {
    await server?.close();
  }
}
