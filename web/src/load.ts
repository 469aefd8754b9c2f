// Loading the wasm module in Node, in a browser page and in a Web Worker.
//
// The module is built for web and workers only (ENVIRONMENT=web,worker): emscripten's Node loader fetches a
// file path, which Node 20's fetch rejects. So in Node we read the bytes ourselves and hand them over as
// `wasmBinary`; elsewhere emscripten fetches `new URL('inductive.wasm', import.meta.url)` of the .mjs, which
// bundlers (Vite, webpack 5) rewrite to the emitted asset.
import createInductiveModule, { type InductiveModule, type ModuleOptions, wasmUrl } from '../wasm/inductive.mjs';
import { typeName } from './checks.js';
import { InductiveError } from './errors.js';

export interface InitOptions {
  /** Where to fetch `inductive.wasm` from (browser/Worker), or a file path/URL to read it from (Node). */
  wasmUrl?: string | URL;
  /** The bytes of `inductive.wasm`, when the caller already has them; skips any fetch or file read. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

const isNode =
  typeof process === 'object' && typeof process.versions === 'object' && typeof process.versions.node === 'string';

export async function loadModule(options: InitOptions = {}): Promise<InductiveModule> {
  const moduleOptions: ModuleOptions = {};
  if (options.wasmBinary !== undefined) {
    moduleOptions.wasmBinary = checkBinary(options.wasmBinary);
  } else if (isNode) {
    moduleOptions.wasmBinary = await readWasmInNode(options.wasmUrl);
  } else if (options.wasmUrl !== undefined) {
    const url = String(options.wasmUrl);
    moduleOptions.locateFile = () => url;
  }
  try {
    return await createInductiveModule(moduleOptions);
  } catch (e) {
    // emscripten 3.1.6 does not report the HTTP status of a failed fetch (it compiles the error page instead):
    // find out whether the file was missing (io) before blaming its contents (backend).
    if (moduleOptions.wasmBinary === undefined) {
      await explainFetchFailure(options.wasmUrl === undefined ? wasmUrl : String(options.wasmUrl));
    }
    throw new InductiveError('backend', 'init: cannot instantiate inductive.wasm (a wrong or damaged file, '
      + `or a runtime without WebAssembly SIMD): ${describe(e)}`);
  }
}

// Throws InductiveError('io') naming the URL and HTTP status when the wasm cannot be fetched; returns otherwise.
async function explainFetchFailure(url: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new InductiveError('io', `init: cannot fetch ${url}: ${describe(e)}`);
  }
  if (!response.ok) throw new InductiveError('io', `init: cannot fetch ${url}: HTTP ${response.status}`);
}

function checkBinary(bytes: unknown): Uint8Array {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  throw new InductiveError('invalid_argument',
    `init: wasmBinary must be an ArrayBuffer or a Uint8Array: got ${typeName(bytes)}`);
}

// Node: the package's own wasm/inductive.wasm by default; a wasmUrl may name another file, or an http(s) URL.
async function readWasmInNode(wasmUrl: string | URL | undefined): Promise<Uint8Array> {
  const where = wasmUrl === undefined ? new URL('../wasm/inductive.wasm', import.meta.url) : wasmUrl;
  const text = String(where);
  if (/^https?:/i.test(text)) {
    const response = await fetch(text);
    if (!response.ok) throw new InductiveError('io', `init: cannot fetch ${text}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  // A specifier in a variable keeps bundlers from trying to pack node:fs into browser builds.
  const fsName = 'node:fs/promises';
  const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ fsName)) as typeof import('node:fs/promises');
  try {
    return await fs.readFile(where);
  } catch (e) {
    throw new InductiveError('io', `init: cannot read the wasm file ${text}: ${describe(e)}`);
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
