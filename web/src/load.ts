// Loading the wasm module in Node, in a browser page and in a Web Worker.
//
// The module is built for web and workers only (ENVIRONMENT=web,worker): emscripten's Node loader fetches a
// file path, which Node 20's fetch rejects. So in Node we read the bytes ourselves and hand them over as
// `wasmBinary`; elsewhere emscripten fetches `new URL('inductive.wasm', import.meta.url)` of the .mjs, which
// bundlers (Vite, webpack 5) rewrite to the emitted asset.
import createInductiveModule, { type InductiveModule, type ModuleOptions, wasmUrl } from '../wasm/inductive.mjs';
import { typeName } from './checks.js';
import { InductiveError } from './errors.js';
import { relaxedSimdSupported, type SimdLevel } from './simd.js';

export interface InitOptions {
  /** Where to fetch `inductive.wasm` from (browser/Worker), or a file path/URL to read it from (Node). */
  wasmUrl?: string | URL;
  /** The bytes of `inductive.wasm`, when the caller already has them; skips any fetch or file read. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Threads for the core's parallel loops (Sinkhorn batches, GraphiT graphs). 'auto' (the default): every core up
   * to 8 where the threaded module can run, else 1. A number >= 1 asks for that many. Threads need a
   * cross-origin-isolated page or Worker (the `Cross-Origin-Opener-Policy: same-origin` and
   * `Cross-Origin-Embedder-Policy: require-corp` headers) for SharedArrayBuffer; elsewhere (Node, a page without
   * the headers, `wasmUrl`/`wasmBinary` given, which name the one-thread module) the one-thread module runs and
   * `threadsNote` says why.
   */
  threads?: number | 'auto';
  /**
   * Which modules run the core. 'auto' (the default): the ones with relaxed SIMD's fused multiply-add where the
   * engine validates it (Chromium 114 and later), the SIMD128 ones elsewhere. 'simd128': the SIMD128 ones
   * everywhere (a multiply and an add; the same results on every engine). `wasmUrl`/`wasmBinary` name the one-thread
   * SIMD128 module.
   */
  simd?: 'auto' | 'simd128';
}

/** A loaded module and how many threads it runs the core on (with the reason when fewer than asked). */
export interface LoadedModule {
  module: InductiveModule;
  threads: number;
  threadsNote: string;
}

const MAX_AUTO_THREADS = 8;

const isNode =
  typeof process === 'object' && typeof process.versions === 'object' && typeof process.versions.node === 'string';

export async function loadModule(options: InitOptions = {}): Promise<LoadedModule> {
  const asked = checkThreads(options.threads);
  const simd = simdPlan(checkSimd(options.simd), options);
  const plan = threadPlan(asked, options);
  if (plan.threads > 1) {
    return { module: await loadThreadedModule(plan.threads, simd), threads: plan.threads, threadsNote: plan.note };
  }
  const module = await loadSingleModule(options, simd);
  module.setThreads(1);
  return { module, threads: 1, threadsNote: plan.note };
}

function checkSimd(simd: unknown): 'auto' | 'simd128' {
  if (simd === undefined || simd === 'auto' || simd === 'simd128') return simd ?? 'auto';
  throw new InductiveError(
    'invalid_argument',
    `init: simd must be 'auto' or 'simd128': got ${typeof simd === 'string' ? `'${simd}'` : typeName(simd)}`,
  );
}

function simdPlan(asked: 'auto' | 'simd128', options: InitOptions): SimdLevel {
  if (asked === 'simd128' || options.wasmUrl !== undefined || options.wasmBinary !== undefined) return 'simd128';
  return relaxedSimdSupported() ? 'relaxed' : 'simd128';
}

function checkThreads(threads: unknown): number | 'auto' {
  if (threads === undefined || threads === 'auto') return 'auto';
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new InductiveError(
      'invalid_argument',
      `init: threads must be 'auto' or an integer in [1, 64]: got ${typeof threads === 'number' ? threads : typeName(threads)}`,
    );
  }
  return threads;
}

// How many threads this runtime can give, and why not more.
function threadPlan(asked: number | 'auto', options: InitOptions): { threads: number; note: string } {
  if (asked === 1) return { threads: 1, note: 'one thread was asked for' };
  if (isNode)
    return { threads: 1, note: 'Node runs the one-thread module (the threaded one is for browsers and Workers)' };
  if (options.wasmUrl !== undefined || options.wasmBinary !== undefined) {
    return { threads: 1, note: 'wasmUrl/wasmBinary name the one-thread module' };
  }
  if (
    typeof SharedArrayBuffer !== 'function' ||
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== true
  ) {
    return {
      threads: 1,
      note:
        'not cross-origin isolated (serve the page with Cross-Origin-Opener-Policy: same-origin and ' +
        'Cross-Origin-Embedder-Policy: require-corp for threads): one thread',
    };
  }
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;
  if (asked === 'auto') {
    const threads = Math.max(1, Math.min(cores, MAX_AUTO_THREADS));
    return { threads, note: threads > 1 ? '' : 'this device reports one core' };
  }
  return { threads: asked, note: '' };
}

// Each module's files. The imports and URLs are written out as literals, in the `import(...)` and
// `new URL(..., import.meta.url)` patterns, because bundlers emit the files and rewrite the addresses only for those.
interface ModuleExports {
  default: typeof createInductiveModule;
  wasmUrl: string;
}
const SINGLE: Record<SimdLevel, { name: string; load: () => Promise<ModuleExports>; nodeWasm: () => URL }> = {
  simd128: {
    name: 'inductive',
    load: async () => ({ default: createInductiveModule, wasmUrl }),
    nodeWasm: () => new URL('../wasm/inductive.wasm', import.meta.url),
  },
  relaxed: {
    name: 'inductive-relaxed',
    load: () => import('../wasm/inductive-relaxed.mjs'),
    nodeWasm: () => new URL('../wasm/inductive-relaxed.wasm', import.meta.url),
  },
};
const THREADED: Record<SimdLevel, { name: string; load: () => Promise<ModuleExports>; script: () => URL }> = {
  simd128: {
    name: 'inductive-mt',
    load: () => import('../wasm/inductive-mt.mjs'),
    script: () => new URL('../wasm/inductive-mt.mjs', import.meta.url),
  },
  relaxed: {
    name: 'inductive-mt-relaxed',
    load: () => import('../wasm/inductive-mt-relaxed.mjs'),
    script: () => new URL('../wasm/inductive-mt-relaxed.mjs', import.meta.url),
  },
};

// The threaded module: `threads - 1` pool workers start with it (each imports the module's .mjs), and the core may
// then use `threads` threads, the caller's included.
async function loadThreadedModule(threads: number, simd: SimdLevel): Promise<InductiveModule> {
  const files = THREADED[simd];
  const scriptUrl = files.script().href;
  let exports: ModuleExports;
  try {
    exports = await files.load();
  } catch (e) {
    throw new InductiveError('io', `init: cannot load the threaded module ${scriptUrl}: ${describe(e)}`);
  }
  let module: InductiveModule;
  try {
    module = await exports.default({ pthreadPoolSize: threads - 1, mainScriptUrlOrBlob: scriptUrl });
  } catch (e) {
    await explainFetchFailure(exports.wasmUrl);
    throw new InductiveError(
      'backend',
      `init: cannot instantiate ${files.name}.wasm with ${threads} threads: ${describe(e)}`,
    );
  }
  module.setThreads(threads);
  return module;
}

async function loadSingleModule(options: InitOptions, simd: SimdLevel): Promise<InductiveModule> {
  const files = SINGLE[simd];
  let exports: ModuleExports;
  try {
    exports = await files.load();
  } catch (e) {
    throw new InductiveError('io', `init: cannot load the module ${files.name}.mjs: ${describe(e)}`);
  }
  const moduleOptions: ModuleOptions = {};
  if (options.wasmBinary !== undefined) {
    moduleOptions.wasmBinary = checkBinary(options.wasmBinary);
  } else if (isNode) {
    moduleOptions.wasmBinary = await readWasmInNode(options.wasmUrl ?? files.nodeWasm());
  } else if (options.wasmUrl !== undefined) {
    const url = String(options.wasmUrl);
    moduleOptions.locateFile = () => url;
  }
  try {
    return await exports.default(moduleOptions);
  } catch (e) {
    // emscripten 3.1.6 does not report the HTTP status of a failed fetch (it compiles the error page instead):
    // find out whether the file was missing (io) before blaming its contents (backend).
    if (moduleOptions.wasmBinary === undefined) {
      await explainFetchFailure(options.wasmUrl === undefined ? exports.wasmUrl : String(options.wasmUrl));
    }
    throw new InductiveError(
      'backend',
      `init: cannot instantiate ${files.name}.wasm (a wrong or damaged file, ` +
        `or a runtime without WebAssembly SIMD or exception handling): ${describe(e)}`,
    );
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
  throw new InductiveError(
    'invalid_argument',
    `init: wasmBinary must be an ArrayBuffer or a Uint8Array: got ${typeName(bytes)}`,
  );
}

// Node: the package's own module file, or a wasmUrl naming another file or an http(s) URL.
async function readWasmInNode(where: string | URL): Promise<Uint8Array> {
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
