// GraphiT in JS (thesis ch. 3; the maths in core/include/inductive/graphit.h): a transformer on the nodes of a
// graph whose attention is modulated by a kernel on the graph. Models are trained natively (`inductive graphit
// train`) and load here unchanged; molecules (SMILES) are parsed by the core's own parser, so atom i here is atom i
// of RDKit's molecule (and of the native CLI's graph). The core does the work; this file moves data in and out.
//
//   const model = ind.loadGraphitModel(bytes);
//   model.predictSmiles('O=[N+]([O-])c1ccc2ccccc2c1').labels;   // ['mutagenic']
//   const a = model.attention('O=[N+]([O-])c1ccccc1');            // per-layer n x n maps, saliency, kernel
//   model.dispose();
import type { GraphitHandle, InductiveModule } from '../wasm/inductive.mjs';
import { checkCount, checkInt, checkNumber, checkOptionsObject, typeName } from './checks.js';
import { optionDefaults } from './defaults.js';
import { InductiveError, invalid, lastError, parseJson } from './errors.js';
import { adoptHandle, WasmObject } from './wasm-object.js';
import { modelFileBytes, views, withBlock } from './heap.js';
import { resolveLabels } from './labels.js';
import type { HeadFitReport } from './otke.js';
import { checkProgress, reportProgress, safeProgress, type ProgressCallback } from './progress.js';

/** A graph as GraphiT takes it: n nodes, undirected edges, one node label (a name of the model's vocabulary) each. */
export interface GraphInput {
  /** Number of nodes (>= 1). */
  n: number;
  /** Edges as [u, v] pairs or a flat Int32Array [u0, v0, u1, v1, ...]; 0-based node ids, either direction,
   * duplicates and self-loops allowed (self-loops are dropped, as in training). */
  edges: Int32Array | ReadonlyArray<readonly [number, number]>;
  /** n node-label names, each one of the model's `nodeLabels` (atom symbols for a molecule model). */
  labels: readonly string[];
}

/** A molecule as the core's SMILES parser reads it; atom and bond order are RDKit's. */
export interface Molecule {
  /** Element symbols, capitalised ("C", "Cl"; aromatic "c" gives "C"). Explicit plain hydrogens are dropped. */
  atoms: string[];
  /** [u, v] with u < v, in the order the string closes them. */
  bonds: [number, number][];
  /** Per bond: 1, 2, 3, 4 (quadruple) or 5 (aromatic: ':' or implicit between aromatic atoms). */
  bondOrders: number[];
  /** Per atom: written in aromatic (lower-case) form. */
  aromatic: boolean[];
  /** Per atom: formal charge (bracket atoms). */
  charges: number[];
}

export interface GraphitPrediction {
  batch: number;
  /** Outputs per graph: classes (classification) or targets (regression). */
  outputs: number;
  /** [batch, outputs]: softmax probabilities (classification) or the predicted values (regression). */
  probabilities: Float32Array;
  /** [batch]: the most probable class (first on ties); -1 for regression. */
  classIndex: Int32Array;
  /** [batch]: its name ('' for regression). */
  labels: string[];
}

/** One graph explained (thesis §3.5): what the model predicts and where its attention goes. */
export interface GraphitAttention {
  /** Nodes (atoms). */
  n: number;
  /** [outputs]: probabilities (classification) or values (regression). */
  probabilities: Float32Array;
  classIndex: number;
  /** The predicted class name ('' for regression). */
  prediction: string;
  /** Per layer: the head-averaged attention [n, n], row-major; row i is how node i attends to the others (rows sum
   * to 1). */
  layers: Float32Array[];
  /** Per layer: the column mass of that matrix divided by n (sums to 1): the nodes the others look at. */
  saliency: Float32Array[];
  /** [n]: the mean of `saliency` over layers. */
  meanSaliency: Float32Array;
  /** [n, n]: the kernel on the graph the attention was modulated by; null for a model without one. */
  kernel: Float32Array | null;
  /** Node-label names (atom symbols). */
  atoms: string[];
  /** Molecule: its bonds (Molecule.bonds order); graph: its edges. */
  bonds: [number, number][];
  /** The edges the model saw: u < v, sorted, unique, no self-loops. */
  edges: [number, number][];
  /** Molecules only: the parsed molecule (bond orders, aromatic flags, charges). */
  molecule: Molecule | null;
}

/** The file's config (see core/include/inductive/graphit.h). */
export interface GraphitConfig {
  input: { vocab: number; features: number; pe: number; path: number; node_labels: string[] };
  encoder: {
    d: number;
    layers: number;
    heads: number;
    ffn: number;
    norm: 'layer' | 'batch';
    dropout: number;
    kernel: boolean;
    degree_scaling: boolean;
  };
  readout: { pooling: 'mean' | 'sum'; hidden: number };
  task: { type: 'classification' | 'regression'; outputs: number; labels: string[] };
  graph?: {
    kernel: { type: string; beta: number; gamma: number; p: number; zero_diagonal: boolean } | null;
    lap_pe: number;
    gckn: Record<string, unknown> | null;
    /** How molecules' atoms became node labels; the core applies it to SMILES. Files store it only when it is
     * not 'element'; the loaded config always has it. */
    atom_typing: 'element' | 'element-charge';
  };
}

interface Description {
  config: GraphitConfig;
  nodeLabels: string[];
  classes: string[];
  task: 'classification' | 'regression';
  outputs: number;
  layers: number;
  heads: number;
  dim: number;
  kernel: string | null;
  formatVersion: number;
  producer: string;
}

interface Summary {
  n: number;
  layers: number;
  outputs: number;
  kernel: boolean;
  edges: [number, number][];
  classIndex?: number;
  atoms: string[];
  bonds: [number, number][];
  bondOrders?: number[];
  aromatic?: number[];
  charges?: number[];
}

/** Options of GraphitModel.predictSmiles. */
export interface PredictOptions {
  /** Molecules per wasm call (progress is reported after each). Default 256. */
  batchSize?: number;
  /** Stage "predict"; return false to cancel (throws InductiveError 'cancelled'). */
  onProgress?: ProgressCallback;
}

/** Options of GraphitModel.refitHead: the few-labels recipe of OtkeModel.fitHead (see its options). */
export interface RefitHeadOptions {
  /** Class names in head order (default: the distinct labels in order of first appearance, or "0".."C-1"). */
  classes?: string[];
  lambda?: number;
  minPerClass?: number;
  maxFolds?: number;
  maxIter?: number;
  tol?: number;
  /** Stages "prepare" (molecules to graphs), "hidden" (the frozen network), "cross-validation", "fit"; return false
   * to cancel (throws InductiveError 'cancelled'; this model is unchanged). */
  onProgress?: ProgressCallback;
}

/** A GraphiT model living in wasm memory. dispose() it (or `using`) when done; every method is synchronous. */
export class GraphitModel extends WasmObject<GraphitHandle> {
  readonly #module: InductiveModule;
  /** The model's configuration, as in its file. */
  readonly config: GraphitConfig;
  /** The node-label vocabulary (atom types of a molecule model, e.g. C, N, O, F, I, Cl, Br). */
  readonly nodeLabels: string[];
  /** Class names (classification; "0", "1", ... when the file names none); [] for regression. */
  readonly labels: string[];
  readonly task: 'classification' | 'regression';
  /** Outputs per graph (classes or regression targets). */
  readonly outputs: number;
  /** Transformer layers, attention heads, hidden dimension. */
  readonly layers: number;
  readonly heads: number;
  readonly dim: number;
  /** The kernel on the graph, e.g. "diffusion(beta=1)"; null for a plain transformer. */
  readonly kernel: string | null;
  readonly formatVersion: number;
  /** The producer recorded in the file ("inductive 0.1.0 native"). */
  readonly producer: string;
  /** How the output layer was refitted (refitHead); null for a loaded model. */
  readonly headFit: HeadFitReport | null;

  /** @internal Use `ind.loadGraphitModel(bytes)`. */
  constructor(module: InductiveModule, handle: GraphitHandle, headFit: HeadFitReport | null = null) {
    super(handle, 'GraphitModel');
    this.#module = module;
    this.headFit = headFit;
    const d = parseJson<Description>(handle.describe(), 'loadGraphitModel');
    this.config = d.config;
    if (this.config.graph) this.config.graph.atom_typing ??= 'element';
    this.nodeLabels = d.nodeLabels;
    this.labels = d.task === 'classification' ? d.classes : [];
    this.task = d.task;
    this.outputs = d.outputs;
    this.layers = d.layers;
    this.heads = d.heads;
    this.dim = d.dim;
    this.kernel = d.kernel;
    this.formatVersion = d.formatVersion;
    this.producer = d.producer;
  }

  /** Number of classes (0 for regression). */
  get classes(): number {
    return this.labels.length;
  }

  /** Predictions for one molecule or several (SMILES; atoms must be in `nodeLabels`). */
  predictSmiles(smiles: string | readonly string[], options?: PredictOptions): GraphitPrediction {
    const where = 'predictSmiles';
    checkOptionsObject(where, options);
    const list =
      typeof smiles === 'string'
        ? [smiles]
        : checkStrings(where, 'smiles', smiles, 'a SMILES string or an array of them');
    const module = this.#module;
    return this.use(where, (handle) => {
      const outputs = this.outputs;
      if (list.length === 0) throw invalid(`${where}: no molecule given`);
      const chunk =
        options?.batchSize === undefined
          ? optionDefaults(module).batchSize
          : checkCount(where, 'batchSize', options.batchSize);
      if (chunk === 0) throw invalid(`${where}: batchSize must be >= 1: got 0`);
      const onProgress = checkProgress(where, options?.onProgress);
      const probabilities = new Float32Array(list.length * outputs);
      reportProgress(where, onProgress, 'predict', 0);
      for (let start = 0; start < list.length; start += chunk) {
        const part = list.slice(start, start + chunk);
        withBlock(module, [{ type: 'f32', length: part.length * outputs }], where, (block) => {
          // Molecules are numbered in the whole list in messages, whatever batch they are in.
          if (!handle.predictSmiles(JSON.stringify(part), start, block.addresses[0] ?? 0)) throw lastError(module);
          probabilities.set(block.readF32(0), start * outputs);
        });
        reportProgress(where, onProgress, 'predict', Math.min(1, (start + part.length) / list.length));
      }
      return this.#prediction(probabilities, list.length);
    });
  }

  /** Predictions for one graph or several ({ n, edges, labels }). */
  predictGraph(graph: GraphInput | readonly GraphInput[]): GraphitPrediction {
    const where = 'predictGraph';
    const list = Array.isArray(graph) ? (graph as readonly unknown[]) : [graph];
    const module = this.#module;
    return this.use(where, (handle) => {
      const outputs = this.outputs;
      if (list.length === 0) throw invalid(`${where}: no graph given`);
      const probabilities = new Float32Array(list.length * outputs);
      list.forEach((g, i) => {
        const what = list.length === 1 && !Array.isArray(graph) ? where : `${where}: graph ${i}`;
        const input = checkGraph(what, g);
        withBlock(
          module,
          [
            { type: 'i32', length: input.edges.length },
            { type: 'f32', length: outputs },
          ],
          what,
          (block) => {
            block.write(0, input.edges);
            if (
              !handle.predictGraph(
                input.n,
                block.addresses[0] ?? 0,
                input.edges.length / 2,
                JSON.stringify(input.labels),
                block.addresses[1] ?? 0,
              )
            ) {
              const e = lastError(module);
              throw new InductiveError(e.code, e.message.replace(/^predictGraph: /, `${what}: `));
            }
            probabilities.set(block.readF32(1), i * outputs);
          },
        );
      });
      return this.#prediction(probabilities, list.length);
    });
  }

  /**
   * Explains one molecule (a SMILES string) or one graph: the prediction, the head-averaged attention of every
   * layer, per-node saliency and the kernel on the graph.
   */
  attention(input: string | GraphInput): GraphitAttention {
    const where = 'attention';
    const module = this.#module;
    return this.use(where, (handle) => {
      let text: string;
      if (typeof input === 'string') {
        text = handle.analyseSmiles(input);
      } else {
        if (input === null || typeof input !== 'object') {
          throw invalid(
            `${where}: input must be a SMILES string or a graph { n, edges, labels }: got ${typeName(input)}`,
          );
        }
        const g = checkGraph(where, input);
        text = withBlock(module, [{ type: 'i32', length: g.edges.length }], where, (block) => {
          block.write(0, g.edges);
          return handle.analyseGraph(g.n, block.addresses[0] ?? 0, g.edges.length / 2, JSON.stringify(g.labels));
        });
      }
      if (text === '') throw lastError(module);
      try {
        const s = parseJson<Summary>(text, where);
        const { n, layers: L } = s;
        const read = (which: number, length: number): Float32Array => {
          const address = handle.resultAddress(which);
          if (address === 0) throw new InductiveError('internal', `${where}: result ${which} is missing`);
          return views(module).HEAPF32.slice(address >>> 2, (address >>> 2) + length);
        };
        const probabilities = read(0, s.outputs);
        const attention = read(1, L * n * n);
        const saliency = read(2, L * n);
        const classIndex = s.classIndex ?? -1;
        const molecule: Molecule | null =
          s.bondOrders === undefined
            ? null
            : {
                atoms: s.atoms,
                bonds: s.bonds,
                bondOrders: s.bondOrders,
                aromatic: (s.aromatic ?? []).map((a) => a !== 0),
                charges: s.charges ?? [],
              };
        return {
          n,
          probabilities,
          classIndex,
          prediction: classIndex >= 0 ? (this.labels[classIndex] ?? String(classIndex)) : '',
          layers: Array.from({ length: L }, (_, l) => attention.slice(l * n * n, (l + 1) * n * n)),
          saliency: Array.from({ length: L }, (_, l) => saliency.slice(l * n, (l + 1) * n)),
          meanSaliency: read(3, n),
          kernel: s.kernel ? read(4, n * n) : null,
          atoms: s.atoms,
          bonds: s.bonds,
          edges: s.edges,
          molecule,
        };
      } finally {
        handle.releaseResult();
      }
    });
  }

  /**
   * A new model: this one with its output layer refitted on labelled molecules, the encoder and the head's hidden
   * layer frozen (core refit_graphit_head; the few-labels recipe of OtkeModel.fitHead on the hidden activations).
   * The classes may be new ones. This model is left unchanged; dispose of both when done.
   */
  refitHead(
    smiles: readonly string[],
    labels: readonly string[] | readonly number[] | Int32Array,
    options?: RefitHeadOptions,
  ): GraphitModel {
    const where = 'refitHead';
    checkOptionsObject(where, options);
    const list = checkStrings(where, 'smiles', smiles, 'an array of SMILES strings');
    const module = this.#module;
    return this.use(where, (handle) => {
      const { y, names } = resolveLabels(where, labels, options?.classes, []);
      if (list.length !== y.length) {
        throw new InductiveError(
          'shape_mismatch',
          `${where}: ${list.length} molecules for ${y.length} labels; expected one label per molecule`,
        );
      }
      const d = optionDefaults(module).headFit;
      const settings = JSON.stringify({
        classes: names,
        lambda: checkNumber(where, 'lambda', options?.lambda, d.lambda),
        minPerClass: checkInt(where, 'minPerClass', options?.minPerClass, d.minPerClass),
        maxFolds: checkInt(where, 'maxFolds', options?.maxFolds, d.maxFolds),
        maxIter: checkInt(where, 'maxIter', options?.maxIter, d.maxIter),
        tol: checkNumber(where, 'tol', options?.tol, d.tol),
      });
      const progress = safeProgress(where, options?.onProgress);
      return adoptHandle(new module.GraphitHandle(), (out) => {
        const report = withBlock(module, [{ type: 'i32', length: y.length }], where, (block) => {
          block.write(0, y);
          const text = handle.refitHead(
            JSON.stringify(list),
            block.addresses[0] ?? 0,
            y.length,
            settings,
            out,
            progress.callback,
          );
          progress.rethrow();
          if (text === '') throw lastError(module);
          return parseJson<HeadFitReport>(text, where);
        });
        return new GraphitModel(module, out, report);
      });
    });
  }

  /** The model file (.safetensors bytes): what `loadGraphitModel` and the native CLI read. */
  toBytes(): Uint8Array {
    return modelFileBytes(this.#module, this.live('toBytes'));
  }

  #prediction(probabilities: Float32Array, batch: number): GraphitPrediction {
    const outputs = this.outputs;
    const classIndex = new Int32Array(batch).fill(-1);
    const labels: string[] = [];
    for (let b = 0; b < batch; ++b) {
      if (this.task !== 'classification') {
        labels.push('');
        continue;
      }
      let best = 0;
      for (let c = 1; c < outputs; ++c) {
        if ((probabilities[b * outputs + c] ?? 0) > (probabilities[b * outputs + best] ?? 0)) best = c;
      }
      classIndex[b] = best;
      labels.push(this.labels[best] ?? String(best));
    }
    return { batch, outputs, probabilities, classIndex, labels };
  }
}

/** Reads a model file into a new GraphitModel; the core's reader validates it (kind "graphit", version, tensors). */
export function loadGraphitModel(module: InductiveModule, bytes: unknown): GraphitModel {
  const where = 'loadGraphitModel';
  if (!(bytes instanceof Uint8Array)) {
    throw invalid(`${where}: bytes must be a Uint8Array: got ${typeName(bytes)}`);
  }
  const data = bytes;
  return adoptHandle(new module.GraphitHandle(), (handle) => {
    // A malloc'd copy is 8-byte aligned, which the reader relies on; the model copies its tensors out of it.
    withBlock(module, [{ type: 'u8', length: data.length }], where, (block) => {
      block.write(0, data);
      if (!handle.load(block.addresses[0] ?? 0, data.length)) throw lastError(module);
    });
    return new GraphitModel(module, handle);
  });
}

/** The molecule of a SMILES string, as the core's parser reads it (the graph GraphiT models see). */
export function parseSmiles(module: InductiveModule, smiles: unknown): Molecule {
  const where = 'parseSmiles';
  if (typeof smiles !== 'string') throw invalid(`${where}: smiles must be a string: got ${typeName(smiles)}`);
  const text = module.parseSmiles(smiles);
  if (text === '') throw lastError(module);
  const m = parseJson<{
    atoms: string[];
    bonds: [number, number][];
    bondOrders: number[];
    aromatic: number[];
    charges: number[];
  }>(text, where);
  return { ...m, aromatic: m.aromatic.map((a) => a !== 0) };
}

function checkStrings(where: string, name: string, x: unknown, what: string): string[] {
  if (!Array.isArray(x)) throw invalid(`${where}: ${name} must be ${what}: got ${typeName(x)}`);
  x.forEach((s, i) => {
    if (typeof s !== 'string') throw invalid(`${where}: ${name}[${i}] must be a string: got ${typeName(s)}`);
  });
  return x as string[];
}

/** Types and lengths of a graph (ids in range and label names are the core's to check). */
function checkGraph(where: string, g: unknown): { n: number; edges: Int32Array; labels: string[] } {
  if (g === null || typeof g !== 'object' || Array.isArray(g)) {
    throw invalid(`${where}: a graph must be an object { n, edges, labels }: got ${typeName(g)}`);
  }
  const o = g as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== 'n' && key !== 'edges' && key !== 'labels') {
      throw invalid(`${where}: unknown graph field '${key}': expected n, edges, labels`);
    }
  }
  const n = checkCount(where, 'n', o.n);
  let edges: Int32Array;
  if (o.edges instanceof Int32Array) {
    if (o.edges.length % 2 !== 0) {
      throw new InductiveError(
        'shape_mismatch',
        `${where}: edges has ${o.edges.length} values; expected pairs [u0, v0, u1, v1, ...] (an even count)`,
      );
    }
    edges = o.edges;
  } else if (Array.isArray(o.edges)) {
    const list = o.edges as unknown[];
    edges = new Int32Array(2 * list.length);
    list.forEach((e, k) => {
      if (
        !Array.isArray(e) ||
        e.length !== 2 ||
        !e.every((v) => Number.isInteger(v) && Math.abs(v as number) < 2 ** 31)
      ) {
        throw invalid(
          `${where}: edge ${k} must be a pair [u, v] of integer node ids: got ${JSON.stringify(e) ?? typeName(e)}`,
        );
      }
      edges[2 * k] = e[0] as number;
      edges[2 * k + 1] = e[1] as number;
    });
  } else {
    throw invalid(`${where}: edges must be an Int32Array or an array of [u, v] pairs: got ${typeName(o.edges)}`);
  }
  const labels = checkStrings(where, 'labels', o.labels, 'an array of node-label names');
  if (labels.length !== n) {
    throw new InductiveError(
      'shape_mismatch',
      `${where}: ${labels.length} labels for ${n} nodes; expected one per node`,
    );
  }
  return { n, edges, labels };
}
