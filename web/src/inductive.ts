// The entry point: init() loads the wasm module once and returns an Inductive bound to it.
import type { InductiveModule } from '../wasm/inductive.mjs';
import { optionDefaults, type OptionDefaults } from './defaults.js';
import { InductiveError } from './errors.js';
import { views } from './heap.js';
import { loadModule, type InitOptions } from './load.js';
import { readModelInfo, type ModelInfo } from './model-info.js';
import { loadGraphitModel, parseSmiles, type GraphitModel, type Molecule } from './graphit.js';
import { parseFasta, parseTextSamples, type FastaRecords, type TextSamples, type TextSamplesOptions } from './text.js';
import { loadOtkeModel, type OtkeModel } from './otke.js';
import { fitOtke, type OtkeFitOptions, type OtkeSets } from './otke-fit.js';
import { datasetFromArrays, loadDataset, type LoadDatasetOptions, type ScreeningDataset } from './screening.js';
import {
  sinkhornBatch,
  sinkhornOne,
  type SinkhornBatchResult,
  type SinkhornBatchShape,
  type SinkhornOptions,
  type SinkhornResult,
} from './sinkhorn.js';

/**
 * One loaded instance of the wasm module. Every method is synchronous and returns typed arrays that JS owns
 * (nothing returned points into wasm memory); every failure throws InductiveError.
 */
export interface Inductive {
  /** Library version, e.g. "0.1.0". */
  readonly version: string;
  /**
   * The SIMD kernel set the core runs on: "wasm-relaxed-simd" (fused multiply-adds: the engine validates relaxed
   * SIMD and InitOptions.simd is 'auto') or "wasm-simd128".
   */
  readonly simd: string;
  /** What this build writes into model files: "inductive <version> wasm". */
  readonly producer: string;
  /**
   * Bytes of wasm memory the module holds now. It grows on demand (up to 2 GiB) and never shrinks, so a value
   * that keeps rising across repeated work means something is not disposed.
   */
  readonly memoryBytes: number;
  /**
   * Sizes this build refuses past, before any work, with InductiveError('invalid_argument'): `maxGraphNodes`, the
   * largest graph or molecule (nodes, atoms) a GraphiT model runs (1024 here; 4096 in the native build): dense
   * kernels and attention maps cost O(n^2) memory and O(n^3) time. `maxKernelSamples`, the most samples
   * `screen({ kernel })` takes (3000 here; 8000 in the native build): the Gram matrix's eigendecomposition costs
   * about 4 n^2 doubles and O(n^3) time.
   */
  readonly limits: Limits;
  /**
   * What every left-out option becomes: the core's defaults (those of the CLI's flags too), e.g.
   * `defaults.sinkhorn.eps`, `defaults.headFit.lambdaGrid`, `defaults.screen.lambda`. Frozen.
   */
  readonly defaults: OptionDefaults;
  /**
   * Threads the core's parallel loops run on (Sinkhorn batches, GraphiT graphs): > 1 only with the threaded
   * module, in a cross-origin-isolated browser page or Worker (see InitOptions.threads).
   */
  readonly threads: number;
  /** Why `threads` is 1 (or fewer than asked); '' when the request was met. */
  readonly threadsNote: string;

  /** Solves one problem with an n x p cost matrix (row-major). */
  sinkhorn(cost: Float32Array, n: number, p: number, options?: SinkhornOptions): SinkhornResult;
  /** Solves a batch of problems padded to nMax x pMax, masked by their true sizes. */
  sinkhornBatch(cost: Float32Array, shape: SinkhornBatchShape, options?: SinkhornOptions): SinkhornBatchResult;
  /** Validates a model file (.safetensors bytes) and describes it. */
  readModelInfo(bytes: Uint8Array): ModelInfo;
  /**
   * Loads an OTKE model file (.safetensors bytes). The model owns wasm memory: dispose() it when done. It stays
   * usable after this instance is disposed.
   */
  loadOtkeModel(bytes: Uint8Array): OtkeModel;
  /**
   * Learns a new OTKE model (without a head) from sequences or vector sets, unsupervised, as `inductive otke fit`
   * does natively: fit a head with `model.fitHead(...)`, save it with `toBytes()`. Long: run it in a Worker;
   * `options.onProgress` returning false cancels it (InductiveError 'cancelled').
   */
  fitOtke(data: string[] | OtkeSets, options?: OtkeFitOptions): OtkeModel;
  /**
   * Parses a dataset for safe sample screening: LIBSVM or CSV text, as a string or as bytes (gzip allowed). The
   * dataset owns wasm memory: dispose() it when done. Malformed input throws InductiveError naming the line.
   */
  loadDataset(text: string | Uint8Array, options: LoadDatasetOptions): ScreeningDataset;
  /** A dataset for safe sample screening from dense row-major features x [n, p] and labels/targets y [n]. */
  datasetFromArrays(x: Float32Array, n: number, p: number, y: Float32Array): ScreeningDataset;
  /**
   * Loads a GraphiT model file (.safetensors bytes). The model owns wasm memory: dispose() it when done. It stays
   * usable after this instance is disposed.
   */
  loadGraphitModel(bytes: Uint8Array): GraphitModel;
  /**
   * Parses a SMILES string with the core's parser (the molecule GraphiT models see; atom order is RDKit's). A
   * syntax error throws InductiveError('invalid_argument') naming the position.
   */
  parseSmiles(smiles: string): Molecule;
  /**
   * Parses FASTA text with the core's reader (what `inductive otke fit --class` and `otke embed --fasta` read):
   * headers and sequences in file order. `name` names the text in messages. Malformed text throws
   * InductiveError('invalid_argument') naming the line.
   */
  parseFasta(fasta: string, name?: string): FastaRecords;
  /**
   * Parses a labelled table with the core's reader: `label<TAB>sequence` lines (`otke fit --tsv`) or a GLUE-style
   * TSV of sentences (`otke fit --text`). Classes are the distinct labels sorted, as the CLI orders them.
   */
  parseTextSamples(table: string, options: TextSamplesOptions): TextSamples;
  /** Releases the wasm instance; every later call throws InductiveError('backend'). Idempotent. */
  dispose(): void;
}

/**
 * Loads the wasm module. Node: reads wasm/inductive.wasm from the package (or `wasmUrl`/`wasmBinary`).
 * Browser and Web Worker: fetches it relative to the package's module URL (or from `wasmUrl`).
 */
export async function init(options?: InitOptions): Promise<Inductive> {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new InductiveError(
      'invalid_argument',
      'init: options must be an object { wasmUrl?, wasmBinary?, threads?, simd? }',
    );
  }
  const loaded = await loadModule(options);
  return new Instance(loaded.module, loaded.threads, loaded.threadsNote);
}

/** Sizes a build refuses past (see Inductive.limits). */
export interface Limits {
  readonly maxGraphNodes: number;
  readonly maxKernelSamples: number;
}

class Instance implements Inductive {
  #module: InductiveModule | null;
  readonly version: string;
  readonly simd: string;
  readonly producer: string;
  readonly limits: Limits;
  readonly defaults: OptionDefaults;
  readonly threads: number;
  readonly threadsNote: string;

  constructor(module: InductiveModule, threads: number, threadsNote: string) {
    this.#module = module;
    this.threads = threads;
    this.threadsNote = threadsNote;
    this.version = module.version();
    this.simd = module.simdKernel();
    this.producer = module.producer();
    this.limits = Object.freeze({
      maxGraphNodes: module.maxGraphNodes(),
      maxKernelSamples: module.maxKernelSamples(),
    });
    this.defaults = optionDefaults(module);
  }

  get memoryBytes(): number {
    return views(this.#live('memoryBytes')).HEAPU8.length;
  }

  sinkhorn(cost: Float32Array, n: number, p: number, options?: SinkhornOptions): SinkhornResult {
    return sinkhornOne(this.#live('sinkhorn'), cost, n, p, options);
  }

  sinkhornBatch(cost: Float32Array, shape: SinkhornBatchShape, options?: SinkhornOptions): SinkhornBatchResult {
    return sinkhornBatch(this.#live('sinkhornBatch'), cost, shape, options);
  }

  readModelInfo(bytes: Uint8Array): ModelInfo {
    return readModelInfo(this.#live('readModelInfo'), bytes);
  }

  loadOtkeModel(bytes: Uint8Array): OtkeModel {
    return loadOtkeModel(this.#live('loadOtkeModel'), bytes);
  }

  fitOtke(data: string[] | OtkeSets, options?: OtkeFitOptions): OtkeModel {
    return fitOtke(this.#live('fitOtke'), data, options);
  }

  loadDataset(text: string | Uint8Array, options: LoadDatasetOptions): ScreeningDataset {
    return loadDataset(this.#live('loadDataset'), text, options);
  }

  datasetFromArrays(x: Float32Array, n: number, p: number, y: Float32Array): ScreeningDataset {
    return datasetFromArrays(this.#live('datasetFromArrays'), x, n, p, y);
  }

  loadGraphitModel(bytes: Uint8Array): GraphitModel {
    return loadGraphitModel(this.#live('loadGraphitModel'), bytes);
  }

  parseSmiles(smiles: string): Molecule {
    return parseSmiles(this.#live('parseSmiles'), smiles);
  }

  parseFasta(fasta: string, name?: string): FastaRecords {
    return parseFasta(this.#live('parseFasta'), fasta, name);
  }

  parseTextSamples(table: string, options: TextSamplesOptions): TextSamples {
    return parseTextSamples(this.#live('parseTextSamples'), table, options);
  }

  // The instance holds no per-call wasm memory (each call frees its block), so dropping the module is all it
  // takes: the garbage collector then reclaims the wasm memory once no OtkeModel, ScreeningDataset or GraphitModel refers to it
  // either.
  dispose(): void {
    this.#module = null;
  }

  #live(where: string): InductiveModule {
    if (this.#module === null) {
      throw new InductiveError('backend', `${where}: this Inductive instance was disposed; call init() again`);
    }
    return this.#module;
  }
}

// `using ind = await init()` where the runtime has explicit resource management (Node >= 20, recent browsers).
// Added at run time only, so that the published types ask no ESNext.Disposable lib of their users.
const disposeSymbol = (Symbol as { dispose?: symbol }).dispose;
if (disposeSymbol !== undefined) {
  Object.defineProperty(Instance.prototype, disposeSymbol, {
    value(this: Instance): void {
      this.dispose();
    },
  });
}
