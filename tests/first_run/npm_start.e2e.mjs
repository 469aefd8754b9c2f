// The first run, as the README tells a newcomer to do it: `npm start`, then open the URL it prints.
//
// Runs `npm start` from the repository root (PORT set to a free port, nothing else changed), reads the URL from
// its stdout, checks that the URL answers 200 with the demo's page, then runs every demo panel's Chromium test
// (web/demo/e2e/*.e2e.mjs) against exactly that URL, and waits for the CLI example that runs while it is served. A `npm start` that serves the wrong folder (the 404 users met)
// or prints a URL nobody answers fails here, whatever the static-server e2e runs say.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const e2eDir = join(repoRoot, 'web', 'demo', 'e2e');
const PANELS = ['demo.e2e.mjs', 'otke.e2e.mjs', 'screening.e2e.mjs', 'graphit.e2e.mjs'];
const START_TIMEOUT_MS = Number(process.env.FIRST_RUN_TIMEOUT_MS ?? 20 * 60 * 1000);

const log = (msg) => console.log(`first-run: ${msg}`);

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

// Starts `npm start` in its own process group (so that vite, under npx under bash under npm, stops with it) and
// resolves to the first line of stdout that is a URL.
function startAndReadUrl(port) {
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = [];
  const remember = (chunk) => {
    output.push(chunk.toString());
    if (output.length > 2000) output.shift();
  };
  child.stderr.on('data', remember);
  const url = new Promise((ok, fail) => {
    let pending = '';
    const timer = setTimeout(
      () => fail(new Error(`npm start printed no URL within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk) => {
      remember(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) {
        const match = /^(https?:\/\/\S+)\s*$/.exec(line.trim());
        if (match) {
          clearTimeout(timer);
          ok(match[1]);
          return;
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`npm start exited (${signal ?? `code ${code}`}) before printing a URL`));
    });
  });
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  };
  return { child, url, stop, output };
}

async function waitForOutput(run, pattern, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(run.output.join(''))) {
    if (run.child.exitCode !== null) throw new Error(`npm start exited with code ${run.child.exitCode} before ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

// The URL is printed just before `vite preview` starts listening: poll until it answers (or npm start dies).
async function waitForPage(url, child) {
  const deadline = Date.now() + 60_000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited with code ${child.exitCode} while serving`);
    try {
      const response = await fetch(url);
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${url} answered HTTP ${response.status}`);
      if (!/<title>[^<]*inductive/i.test(body)) throw new Error(`${url} answered a page that is not the demo`);
      return;
    } catch (e) {
      last = e.message;
      if (/answered/.test(last)) throw e;
    }
    await new Promise((ok) => setTimeout(ok, 250));
  }
  throw new Error(`${url} did not answer within 60 s: ${last}`);
}

function runPanel(script, url) {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [join(e2eDir, script)], {
      cwd: repoRoot,
      // vite preview sends COOP/COEP (web/demo/vite.config.ts): the page must be cross-origin isolated there.
      env: { ...process.env, DEMO_URL: url, DEMO_EXPECT_ISOLATED: '1' },
      stdio: 'inherit',
    });
    child.once('exit', (code) => ok(code ?? 1));
  });
}

async function main() {
  const port = await freePort();
  const started = Date.now();
  log(`running \`npm start\` with PORT=${port}`);
  const run = startAndReadUrl(port);
  let failed = false;
  try {
    const url = await run.url;
    const expected = `http://127.0.0.1:${port}/`;
    if (url !== expected) throw new Error(`npm start printed ${url}, expected ${expected}`);
    await waitForPage(url, run.child);
    log(`${url} serves the demo ${((Date.now() - started) / 1000).toFixed(1)} s after \`npm start\``);
    for (const panel of PANELS) {
      const code = await runPanel(panel, url);
      if (code !== 0) {
        failed = true;
        console.error(`first-run: FAIL: ${panel} failed against the URL \`npm start\` printed (${url})`);
      }
    }
    // The CLI example runs while the demo is served: it must finish, with a converged plan.
    await waitForOutput(run, /demo: still serving/, START_TIMEOUT_MS, 'the CLI example to finish');
    const summary = /\{[^{}]*"converged"[^{}]*\}/.exec(run.output.join(''));
    if (!summary || JSON.parse(summary[0]).converged !== true) {
      throw new Error(`the CLI example printed no converged summary: ${summary?.[0] ?? 'nothing'}`);
    }
    log(
      `the CLI example ran while the demo was served (${((Date.now() - started) / 1000).toFixed(1)} s after \`npm start\`)`,
    );
  } catch (e) {
    failed = true;
    console.error(
      `first-run: FAIL: ${e.message}\n--- npm start output (last lines) ---\n${run.output.join('').slice(-4000)}`,
    );
  } finally {
    run.stop();
  }
  if (failed) process.exitCode = 1;
  else log('PASS: every demo panel works at the URL `npm start` printed');
}

await main();
