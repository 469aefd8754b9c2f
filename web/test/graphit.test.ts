// GraphiT in wasm against the native build, against RDKit and against the maths: the default model's predictions,
// attention maps, saliency and kernels equal the native CLI's (committed reference, tests/data/graphit/README.md);
// our SMILES parser gives RDKit's molecule (same atoms in the same order, same charges, same bonds) on every molecule
// of MoleculeNet BBBP, so the demo's RDKit drawing colours atom i by node i; attention rows and saliency sum to 1;
// relabelling the nodes of a graph permutes every output the same way; bad inputs are typed errors.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import rdkit from '@rdkit/rdkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, type GraphitModel, type GraphInput } from '../src/index.js';
import { expectInductiveError } from './support/expect.js';
import { readNpy } from './support/otke.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const ind = await init();
// @rdkit/rdkit is a CommonJS file typed as an ES module: at run time its factory is the default import, to the type
// checker (NodeNext) it is that import's `default`.
const initRDKitModule = ((rdkit as unknown as { default?: typeof rdkit.default }).default ??
  rdkit) as typeof rdkit.default;

const MODEL = repo('data/models/graphit-mutag.safetensors');
const REF = (path: string): string => repo(`tests/data/graphit/${path}`);
// The SMILES of tests/data/graphit/README.md, in its order (attention-<i>/).
const REFERENCE_SMILES = [
  'O=[N+]([O-])c1ccc2ccccc2c1',
  'Nc1ccc(cc1)-c1ccc(N)cc1',
  'CCO',
  'Clc1ccc(Cl)cc1',
  'O=[N+]([O-])c1ccc(Br)cc1',
  'Fc1ccc(I)c(C(=O)O)c1',
];
// Native (x86, Eigen AVX) and wasm (SIMD128) sum in different orders; the brief's bound.
const NATIVE_TOL = 1e-4;

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; ++i) d = Math.max(d, Math.abs((a[i] ?? NaN) - (b[i] ?? NaN)));
  return d;
}

function npy(path: string): { shape: number[]; data: Float32Array } {
  const r = readNpy(new Uint8Array(readFileSync(path)));
  if (!(r.data instanceof Float32Array)) throw new Error(`${path}: expected float32`);
  return { shape: r.shape, data: r.data };
}

function concat(arrays: Float32Array[]): Float32Array {
  const out = new Float32Array(arrays.reduce((s, a) => s + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

let model: GraphitModel;
beforeAll(() => {
  model = ind.loadGraphitModel(new Uint8Array(readFileSync(MODEL)));
});
afterAll(() => model.dispose());

describe('the default GraphiT model', () => {
  it('describes itself: MUTAG atom types, two classes, 3 layers x 4 heads, diffusion kernel', () => {
    expect(model.nodeLabels).toEqual(['C', 'N', 'O', 'F', 'I', 'Cl', 'Br']);
    expect(model.labels).toEqual(['non-mutagenic', 'mutagenic']);
    expect(model.classes).toBe(2);
    expect(model.task).toBe('classification');
    expect([model.layers, model.heads, model.dim]).toEqual([3, 4, 64]);
    expect(model.kernel).toBe('diffusion(beta=1)');
    expect(model.config.encoder.kernel).toBe(true);
    expect(model.config.input.node_labels).toEqual(model.nodeLabels);
    expect(model.formatVersion).toBe(1);
    expect(model.producer).toMatch(/^inductive \d+\.\d+\.\d+ native$/);
  });

  it(`predicts the reference molecules as the native CLI does (max abs diff <= ${NATIVE_TOL})`, () => {
    const ref = npy(REF('predict.npy'));
    const report = JSON.parse(readFileSync(REF('predict.json'), 'utf8')) as {
      graphs: { name: string; prediction: string; probabilities: number[] }[];
    };
    expect(report.graphs.map((g) => g.name)).toEqual(REFERENCE_SMILES);
    expect(ref.shape).toEqual([REFERENCE_SMILES.length, 2]);
    const p = model.predictSmiles(REFERENCE_SMILES);
    expect([p.batch, p.outputs]).toEqual([REFERENCE_SMILES.length, 2]);
    expect(maxAbsDiff(p.probabilities, ref.data)).toBeLessThanOrEqual(NATIVE_TOL);
    expect(p.labels).toEqual(report.graphs.map((g) => g.prediction));
    expect(Array.from(p.classIndex)).toEqual(p.labels.map((l) => model.labels.indexOf(l)));
    // One molecule at a time gives the same numbers as the batch.
    REFERENCE_SMILES.forEach((s, i) => {
      const one = model.predictSmiles(s);
      expect(one.batch).toBe(1);
      expect(maxAbsDiff(one.probabilities, p.probabilities.subarray(2 * i, 2 * i + 2))).toBeLessThanOrEqual(1e-6);
    });
  });

  it.each(REFERENCE_SMILES.map((s, i) => [i, s] as const))(
    `explains reference molecule %i (%s) as the native CLI does: attention, saliency, kernel (<= ${NATIVE_TOL})`,
    (i, smiles) => {
      const summary = JSON.parse(readFileSync(REF(`attention-${i}/summary.json`), 'utf8')) as {
        graph: string;
        nodes: string[];
        edges: [number, number][];
        layers: number;
        probabilities: number[];
        mean_saliency: number[];
      };
      expect(summary.graph).toBe(smiles);
      const a = model.attention(smiles);
      const n = summary.nodes.length;
      expect(a.n).toBe(n);
      expect(a.atoms).toEqual(summary.nodes);
      expect(a.edges).toEqual(summary.edges);
      expect(a.layers).toHaveLength(summary.layers);
      expect(maxAbsDiff(a.probabilities, summary.probabilities)).toBeLessThanOrEqual(NATIVE_TOL);
      const attention = npy(REF(`attention-${i}/attention.npy`));
      expect(attention.shape).toEqual([summary.layers, n, n]);
      expect(maxAbsDiff(concat(a.layers), attention.data)).toBeLessThanOrEqual(NATIVE_TOL);
      const saliency = npy(REF(`attention-${i}/saliency.npy`));
      expect(saliency.shape).toEqual([summary.layers, n]);
      expect(maxAbsDiff(concat(a.saliency), saliency.data)).toBeLessThanOrEqual(NATIVE_TOL);
      expect(maxAbsDiff(a.meanSaliency, summary.mean_saliency)).toBeLessThanOrEqual(NATIVE_TOL);
      const kernel = npy(REF(`attention-${i}/kernel.npy`));
      expect(kernel.shape).toEqual([n, n]);
      expect(a.kernel).not.toBeNull();
      expect(maxAbsDiff(a.kernel ?? new Float32Array(0), kernel.data)).toBeLessThanOrEqual(NATIVE_TOL);
      // The prediction part agrees with predictSmiles.
      expect(maxAbsDiff(a.probabilities, model.predictSmiles(smiles).probabilities)).toBeLessThanOrEqual(1e-6);
      expect(a.prediction).toBe(model.labels[a.classIndex]);
    },
  );
});

describe('a regression model typed by charge (element-charge atom types)', () => {
  // tests/data/graphit-zinc/README.md: a tiny ZINC model and the native CLI's predictions on these molecules.
  const ZINC = (path: string): string => repo(`tests/data/graphit-zinc/${path}`);

  it('predicts as the native CLI does: the core types [NH3+] as N+ in the browser too', () => {
    const zinc = ind.loadGraphitModel(new Uint8Array(readFileSync(ZINC('model.safetensors'))));
    try {
      expect(zinc.task).toBe('regression');
      expect(zinc.config.graph?.atom_typing).toBe('element-charge');
      expect(zinc.nodeLabels).toContain('N+');
      expect(zinc.nodeLabels).toContain('O-');
      const report = JSON.parse(readFileSync(ZINC('predict.json'), 'utf8')) as {
        graphs: { name: string; prediction: number }[];
      };
      const ref = npy(ZINC('predict.npy'));
      const smiles = report.graphs.map((g) => g.name);
      expect(ref.shape).toEqual([smiles.length, 1]);
      const p = zinc.predictSmiles(smiles);
      expect([p.batch, p.outputs]).toEqual([smiles.length, 1]);
      expect(maxAbsDiff(p.probabilities, ref.data)).toBeLessThanOrEqual(NATIVE_TOL);
      expect(Array.from(p.classIndex)).toEqual(smiles.map(() => -1));
      // The charge makes another graph: ethylammonium and ethylamine differ (one graph under element typing).
      const [charged, neutral] = zinc.predictSmiles(['CC[NH3+]', 'CCN']).probabilities;
      expect(Math.abs((charged ?? 0) - (neutral ?? 0))).toBeGreaterThan(0.1);
      // A type the model never saw is named as a type.
      expectInductiveError(() => zinc.predictSmiles('C[N-]C'), 'invalid_argument', 'atom 2 is N-');
    } finally {
      zinc.dispose();
    }
  });

  it('the default model, whose file predates the key, is typed by element and ignores charges', () => {
    expect(model.config.graph?.atom_typing).toBe('element');
    const [a, b] = [model.predictSmiles('CC[NH3+]'), model.predictSmiles('CCN')];
    expect(maxAbsDiff(a.probabilities, b.probabilities)).toBe(0);
  });
});

describe('SMILES: the same molecule as RDKit', () => {
  // Element symbols by atomic number (RDKit's JSON gives z).
  const ELEMENTS = (
    'H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr ' +
    'Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W ' +
    'Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn'
  ).split(' ');

  it("parses every molecule of MoleculeNet BBBP (2039) into RDKit's atoms (order, element) and bonds, charges as written", async () => {
    const RDKit = await initRDKitModule();
    const lines = readFileSync(repo('data/molecules/bbbp.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe('smiles,p_np');
    const smiles = lines.slice(1).map((line) => line.slice(0, line.lastIndexOf(',')));
    expect(smiles).toHaveLength(2039);
    let compared = 0;
    const mismatches: string[] = [];
    const chargeDifferences: { smiles: string; atoms: string }[] = [];
    for (const s of smiles) {
      const mol = RDKit.get_mol(s);
      // RDKit reads all of them (as python3-rdkit does: tests/oracle/test_smiles_rdkit.py); a failure is a finding.
      expect(mol?.is_valid(), `RDKit cannot read ${s}`).toBe(true);
      if (mol === null) continue;
      const json = JSON.parse(mol.get_json()) as {
        defaults: { atom: { z: number; chg: number }; bond: { bo: number } };
        molecules: { atoms: { z?: number; chg?: number }[]; bonds: { atoms: [number, number] }[] }[];
      };
      mol.delete();
      const { defaults } = json;
      const m = json.molecules[0]!;
      // Defaults are left out of each atom (carbon is {}): merge them back.
      const rdAtoms = m.atoms.map((a) => ({ ...defaults.atom, ...a }));
      const rdBonds = m.bonds.map((b) => [Math.min(...b.atoms), Math.max(...b.atoms)].join('-')).sort();
      const ours = ind.parseSmiles(s);
      const sameAtoms =
        ours.atoms.length === rdAtoms.length &&
        ours.atoms.every((sym, i) => ELEMENTS[(rdAtoms[i]?.z ?? 0) - 1] === sym);
      // RDKit lists ring-closure bonds last, we list them where the string closes them: compare as sets.
      const sameBonds = JSON.stringify(ours.bonds.map(([u, v]) => `${u}-${v}`).sort()) === JSON.stringify(rdBonds);
      if (!sameAtoms || !sameBonds) mismatches.push(s);
      const charged = ours.charges.flatMap((c, i) => (c === rdAtoms[i]?.chg ? [] : [`${ours.atoms[i]}${i}`]));
      if (charged.length > 0) chargeDifferences.push({ smiles: s, atoms: charged.join(' ') });
      ++compared;
    }
    expect(mismatches).toEqual([]);
    // Charges are as written in the string. RDKit's sanitisation rewrites a pentavalent nitro group N(=O)=O as
    // [N+](=O)[O-] (3 molecules of BBBP): that, and only that, may differ.
    expect(chargeDifferences.length).toBe(3);
    for (const d of chargeDifferences) {
      expect(d.smiles).toContain('N(=O)=O');
      expect(d.atoms).toMatch(/^(N\d+ O\d+|O\d+ N\d+)$/);
    }
    expect(compared).toBe(2039);
  }, 120_000);

  it('describes a molecule: atoms, bonds (u < v, string order), bond orders, aromatic flags, charges', () => {
    const m = ind.parseSmiles('O=[N+]([O-])c1ccccc1');
    expect(m.atoms).toEqual(['O', 'N', 'O', 'C', 'C', 'C', 'C', 'C', 'C']);
    expect(m.bonds).toEqual([
      [0, 1],
      [1, 2],
      [1, 3],
      [3, 4],
      [4, 5],
      [5, 6],
      [6, 7],
      [7, 8],
      [3, 8],
    ]);
    expect(m.bondOrders).toEqual([2, 1, 1, 5, 5, 5, 5, 5, 5]);
    expect(m.aromatic).toEqual([false, false, false, true, true, true, true, true, true]);
    expect(m.charges).toEqual([0, 1, -1, 0, 0, 0, 0, 0, 0]);
    // Explicit plain hydrogens are dropped, as RDKit does by default; charged or isotopic ones stay.
    expect(ind.parseSmiles('[H]OC([H])([H])[H]').atoms).toEqual(['O', 'C']);
    expect(ind.parseSmiles('[2H]C').atoms).toEqual(['H', 'C']);
  });
});

describe('attention: the maths', () => {
  // Rows sum to 1 unless the row sum of exp(S) * K falls under the reference's 1e-6 floor (graphit.h): that happens
  // in the last layer of 2-aminoanthracene (3 of 15 rows), whose attention is very peaked on far atoms. Then the row
  // sums to less than 1, and saliency sums to the mean row sum.
  const molecules: [string, number][] = [
    ['O=[N+]([O-])c1ccc2ccccc2c1', 0],
    ['OCC(O)CO', 0],
    ['C', 0],
    ['CC.O', 0],
    ['c1ccc(cc1)N=Nc1ccccc1', 0],
    ['Nc1ccc2cc3ccccc3cc2c1', 3],
  ];

  it.each(molecules)(
    '%s: attention rows sum to 1 (%i floored), saliency is the column mean, kernel symmetric',
    (s, floored) => {
      const a = model.attention(s);
      const { n } = a;
      expect(a.layers).toHaveLength(model.layers);
      let under = 0;
      for (let l = 0; l < a.layers.length; ++l) {
        const A = a.layers[l]!;
        expect(A).toHaveLength(n * n);
        let total = 0;
        for (let i = 0; i < n; ++i) {
          let row = 0;
          for (let j = 0; j < n; ++j) {
            expect(A[i * n + j]).toBeGreaterThanOrEqual(0);
            row += A[i * n + j]!;
          }
          expect(row).toBeLessThanOrEqual(1 + 1e-5);
          if (row < 1 - 1e-5) ++under;
          total += row;
        }
        const sal = a.saliency[l]!;
        expect(sal.reduce((x, y) => x + y, 0)).toBeCloseTo(total / n, 5);
        for (let j = 0; j < n; ++j) {
          let col = 0;
          for (let i = 0; i < n; ++i) col += A[i * n + j]!;
          expect(sal[j]).toBeCloseTo(col / n, 6);
        }
      }
      expect(under).toBe(floored);
      if (floored === 0) for (const sal of a.saliency) expect(sal.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 5);
      for (let j = 0; j < n; ++j) {
        const mean = a.saliency.reduce((x, sal) => x + sal[j]!, 0) / a.saliency.length;
        expect(a.meanSaliency[j]).toBeCloseTo(mean, 6);
      }
      const K = a.kernel!;
      for (let i = 0; i < n; ++i) for (let j = 0; j < n; ++j) expect(K[i * n + j]).toBeCloseTo(K[j * n + i]!, 6);
      const p = a.probabilities;
      expect(p[0]! + p[1]!).toBeCloseTo(1, 6);
    },
  );

  it('a graph given by edges and labels is the molecule given by SMILES', () => {
    const smiles = 'O=[N+]([O-])c1ccc(Br)cc1';
    const m = ind.parseSmiles(smiles);
    const graph: GraphInput = { n: m.atoms.length, edges: m.bonds, labels: m.atoms };
    const fromSmiles = model.attention(smiles);
    const fromGraph = model.attention(graph);
    expect(fromGraph.atoms).toEqual(fromSmiles.atoms);
    expect(fromGraph.edges).toEqual(fromSmiles.edges);
    expect(fromGraph.molecule).toBeNull();
    expect(fromSmiles.molecule?.atoms).toEqual(m.atoms);
    expect(maxAbsDiff(fromGraph.probabilities, fromSmiles.probabilities)).toBe(0);
    expect(maxAbsDiff(concat(fromGraph.layers), concat(fromSmiles.layers))).toBe(0);
    // A flat Int32Array, reversed pairs and duplicated edges: the same graph.
    const flat = new Int32Array(m.bonds.flatMap(([u, v]) => [v, u, u, v]));
    const p = model.predictGraph({ n: m.atoms.length, edges: flat, labels: m.atoms });
    expect(maxAbsDiff(p.probabilities, fromSmiles.probabilities)).toBe(0);
    const batch = model.predictGraph([
      graph,
      {
        n: 3,
        edges: [
          [0, 1],
          [1, 2],
        ],
        labels: ['C', 'C', 'O'],
      },
    ]);
    expect(batch.batch).toBe(2);
    expect(maxAbsDiff(batch.probabilities, model.predictSmiles([smiles, 'CCO']).probabilities)).toBeLessThanOrEqual(
      1e-6,
    );
  });

  it('relabelling the nodes permutes attention, saliency and kernel the same way; the prediction is unchanged', () => {
    const m = ind.parseSmiles('Nc1ccc(cc1)-c1ccc(N)cc1');
    const n = m.atoms.length;
    // A fixed permutation: new node k is old node perm[k].
    const perm = Array.from({ length: n }, (_, k) => (k * 5 + 3) % n);
    expect(new Set(perm).size).toBe(n);
    const inverse = new Array<number>(n);
    perm.forEach((old, k) => {
      inverse[old] = k;
    });
    const a = model.attention({ n, edges: m.bonds, labels: m.atoms });
    const b = model.attention({
      n,
      edges: m.bonds.map(([u, v]) => [inverse[u]!, inverse[v]!] as [number, number]),
      labels: perm.map((old) => m.atoms[old]!),
    });
    expect(maxAbsDiff(a.probabilities, b.probabilities)).toBeLessThanOrEqual(1e-5);
    for (let l = 0; l < a.layers.length; ++l) {
      for (let i = 0; i < n; ++i) {
        expect(b.saliency[l]![i]).toBeCloseTo(a.saliency[l]![perm[i]!]!, 5);
        for (let j = 0; j < n; ++j) {
          expect(b.layers[l]![i * n + j]).toBeCloseTo(a.layers[l]![perm[i]! * n + perm[j]!]!, 5);
        }
      }
    }
    for (let i = 0; i < n; ++i) {
      for (let j = 0; j < n; ++j) expect(b.kernel![i * n + j]).toBeCloseTo(a.kernel![perm[i]! * n + perm[j]!]!, 5);
    }
  });
});

describe('GraphiT: bad inputs are typed errors', () => {
  it('invalid SMILES name the position', () => {
    expectInductiveError(() => model.attention('C(C'), 'invalid_argument', 'smiles', "'(' not closed");
    expectInductiveError(() => model.predictSmiles('C1CC'), 'invalid_argument', 'smiles', 'ring bond 1');
    expectInductiveError(() => ind.parseSmiles('CC%'), 'invalid_argument', 'smiles: position');
    expectInductiveError(() => ind.parseSmiles(''), 'invalid_argument', 'empty');
    expectInductiveError(
      () => model.predictSmiles(['CCO', 'c1ccXc1']),
      'invalid_argument',
      'molecule 1',
      'c1ccXc1',
      'position',
    );
  });

  it('an atom the model does not know names it and the vocabulary', () => {
    expectInductiveError(() => model.attention('CS'), 'invalid_argument', 'atom 2 is S', 'C, N, O, F, I, Cl, Br');
    expectInductiveError(
      () => model.predictSmiles(['CCO', 'C[Na]']),
      'invalid_argument',
      'molecule 1',
      'Na',
      'C, N, O, F, I, Cl, Br',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 2, edges: [[0, 1]], labels: ['C', 'S'] }),
      'invalid_argument',
      "'S'",
      'C, N, O, F, I, Cl, Br',
    );
  });

  it('graphs: edges outside the graph, wrong types and lengths', () => {
    expectInductiveError(
      () => model.attention({ n: 2, edges: [[0, 2]], labels: ['C', 'C'] }),
      'invalid_argument',
      'edge 0 (0, 2)',
      'outside the graph',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 2, edges: new Int32Array([0, -1]), labels: ['C', 'C'] }),
      'invalid_argument',
      'outside the graph',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 2, edges: new Int32Array([0, 1, 1]), labels: ['C', 'C'] }),
      'shape_mismatch',
      'even',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 3, edges: [], labels: ['C', 'C'] }),
      'shape_mismatch',
      '2 labels for 3 nodes',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 0, edges: [], labels: [] }),
      'invalid_argument',
      'at least one node',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 1.5, edges: [], labels: ['C'] }),
      'invalid_argument',
      'n must be',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 2, edges: new Float32Array([0, 1]), labels: ['C', 'C'] } as never),
      'invalid_argument',
      'edges must be an Int32Array',
      'Float32Array',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 2, edges: [[0, 1.5]], labels: ['C', 'C'] } as never),
      'invalid_argument',
      'edge 0',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 1, edges: [], labels: [6] } as never),
      'invalid_argument',
      'labels[0] must be a string',
    );
    expectInductiveError(
      () => model.predictGraph({ n: 1, edges: [], labels: ['C'], weights: [] } as never),
      'invalid_argument',
      "unknown graph field 'weights'",
    );
    expectInductiveError(() => model.predictGraph([]), 'invalid_argument', 'no graph');
    expectInductiveError(
      () =>
        model.predictGraph([
          { n: 1, edges: [], labels: ['C'] },
          { n: 1, edges: [], labels: ['X'] },
        ]),
      'invalid_argument',
      'graph 1',
      "'X'",
    );
    expectInductiveError(() => model.predictSmiles([]), 'invalid_argument', 'no molecule');
    expectInductiveError(() => model.predictSmiles(42 as never), 'invalid_argument', 'smiles must be');
    expectInductiveError(() => model.predictSmiles(['C', 4] as never), 'invalid_argument', 'smiles[1]');
    expectInductiveError(() => model.attention(7 as never), 'invalid_argument', 'SMILES string or a graph');
    expectInductiveError(() => ind.parseSmiles(null as never), 'invalid_argument', 'smiles must be a string');
  });

  it('model files: another kind, garbage, not bytes', () => {
    expectInductiveError(
      () => ind.loadGraphitModel(new Uint8Array(readFileSync(repo('data/models/otke-promoters-ecoli.safetensors')))),
      'bad_model_file',
      "'otke'",
      'graphit',
    );
    expectInductiveError(() => ind.loadGraphitModel(new Uint8Array(16)), 'bad_model_file');
    const good = new Uint8Array(readFileSync(MODEL));
    expectInductiveError(() => ind.loadGraphitModel(good.subarray(0, good.length - 8)), 'bad_model_file');
    expectInductiveError(() => ind.loadGraphitModel([1, 2, 3] as never), 'invalid_argument', 'Uint8Array');
  });

  it('a disposed model (or instance) refuses every call; dispose is idempotent', async () => {
    const m = ind.loadGraphitModel(new Uint8Array(readFileSync(MODEL)));
    expect(m.disposed).toBe(false);
    m.dispose();
    m.dispose();
    expect(m.disposed).toBe(true);
    expectInductiveError(() => m.predictSmiles('CCO'), 'backend', 'disposed');
    expectInductiveError(() => m.attention('CCO'), 'backend', 'disposed');
    expectInductiveError(() => m.predictGraph({ n: 1, edges: [], labels: ['C'] }), 'backend', 'disposed');
    const other = await init();
    const kept = other.loadGraphitModel(new Uint8Array(readFileSync(MODEL)));
    other.dispose();
    expectInductiveError(() => other.parseSmiles('C'), 'backend', 'disposed');
    expectInductiveError(() => other.loadGraphitModel(new Uint8Array(0)), 'backend', 'disposed');
    expect(kept.predictSmiles('CCO').batch).toBe(1); // a model outlives its instance
    kept.dispose();
  });

  it('errors leave the model usable (200 failing and succeeding calls in a row)', () => {
    const before = model.predictSmiles('CCO').probabilities;
    for (let i = 0; i < 200; ++i) {
      expect(() => model.attention('C(C')).toThrow();
      expect(() => model.attention('CS')).toThrow();
      model.attention('O=[N+]([O-])c1ccc2ccccc2c1');
    }
    expect(maxAbsDiff(model.predictSmiles('CCO').probabilities, before)).toBe(0);
  });
});
