// The molecule drawn by RDKit (MinimalLib, on the main thread), its atoms coloured by the saliency of the selected
// layer: the attention the other atoms pay to each atom (thesis §3.5). Our SMILES parser gives RDKit's atom order,
// so atom i of the drawing is node i of the model's graph; a count mismatch is reported, never drawn wrongly.

import type { MainModule } from '@rdkit/rdkit';
import rdkitWasmUrl from '@rdkit/rdkit/RDKit_minimal.wasm?url';
import { h } from '../dom';
import { formatValue } from '../format';
import { saliencyColour, saliencyGradient } from './saliency_colours';

const WIDTH = 520;
const HEIGHT = 360;

let rdkit: Promise<MainModule> | null = null;

/** RDKit's module, loaded once (its own chunk and about 7 MB of wasm, served next to the bundle). */
export function loadRDKit(): Promise<MainModule> {
  rdkit ??= import('@rdkit/rdkit')
    .then(({ default: initRDKitModule }) => initRDKitModule({ locateFile: () => rdkitWasmUrl }))
    .then((module) => {
      // RDKit would print parse and valence complaints to the console; the panel reports them itself.
      module.disable_logging();
      return module;
    });
  rdkit.catch(() => {
    rdkit = null;
  });
  return rdkit;
}

export interface MoleculeData {
  smiles: string;
  n: number;
  atoms: string[];
  /** [n]: the saliency to colour by. */
  saliency: Float32Array;
  /** What it is ("layer 2", "mean over layers"). */
  what: string;
}

export class MoleculeView {
  readonly element: HTMLElement;
  private readonly drawing: HTMLElement;
  private readonly note: HTMLElement;
  private readonly minLabel: HTMLElement;
  private readonly maxLabel: HTMLElement;
  private token = 0;

  constructor() {
    this.drawing = h('div', {
      class: 'graphit-molecule',
      'data-testid': 'graphit-molecule',
      'data-drawn': 'false',
      role: 'img',
      'aria-label': 'Molecule: nothing drawn yet',
    });
    this.note = h('p', { class: 'hint', 'data-testid': 'graphit-molecule-note' }, '');
    this.minLabel = h('span', { 'data-testid': 'graphit-saliency-min' }, '—');
    this.maxLabel = h('span', { 'data-testid': 'graphit-saliency-max' }, '—');
    const ramp = h('span', { class: 'ramp', 'aria-hidden': 'true' });
    ramp.style.background = saliencyGradient();
    this.element = h(
      'figure',
      { class: 'graphit-molecule-figure' },
      this.drawing,
      h(
        'figcaption',
        {},
        h(
          'div',
          { class: 'legend-ramp', 'data-testid': 'graphit-saliency-legend' },
          h('span', {}, 'saliency'),
          this.minLabel,
          ramp,
          this.maxLabel,
        ),
        this.note,
      ),
    );
    this.clear('loading RDKit…');
  }

  async draw(d: MoleculeData): Promise<void> {
    const token = ++this.token;
    let module: MainModule;
    try {
      module = await loadRDKit();
    } catch (err) {
      if (token === this.token)
        this.clear(`RDKit could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (token !== this.token) return; // a newer drawing was asked for meanwhile
    const mol = module.get_mol(d.smiles);
    if (mol === null || !mol.is_valid()) {
      mol?.delete();
      this.clear('RDKit cannot read this molecule (it checks valences, the model does not): no drawing.');
      return;
    }
    try {
      const count = mol.get_num_atoms();
      // Colours span the molecule's own range of saliency (min to max): with a few atoms each gets about 1/n, and
      // what matters is which atoms get more than the others.
      let min = Infinity;
      let max = -Infinity;
      for (const v of d.saliency) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      const range = max - min;
      const colours: Record<number, number[]> = {};
      const radii: Record<number, number> = {};
      const same = count === d.n;
      if (same) {
        for (let i = 0; i < d.n; i++) {
          const t = range > 0 ? (d.saliency[i] - min) / range : 0;
          colours[i] = saliencyColour(t).map((c) => Math.round(c) / 255);
          radii[i] = 0.3 + 0.25 * t;
        }
      }
      const svgText = mol.get_svg_with_highlights(
        JSON.stringify({
          atoms: same ? Array.from({ length: d.n }, (_, i) => i) : [],
          bonds: [],
          highlightAtomColors: colours,
          atomRadii: radii,
          width: WIDTH,
          height: HEIGHT,
          addAtomIndices: true,
        }),
      );
      // RDKit's own SVG (drawn from the parsed molecule, no markup from the input) is inserted as it is.
      this.drawing.innerHTML = svgText;
      this.drawing.dataset.drawn = 'true';
      this.drawing.dataset.atoms = String(count);
      this.drawing.dataset.highlighted = String(same ? d.n : 0);
      this.drawing.setAttribute('aria-label', `Molecule ${d.smiles}, atoms coloured by ${d.what} saliency`);
      this.minLabel.textContent = formatValue(min, 3);
      this.maxLabel.textContent = formatValue(max, 3);
      this.note.textContent = same
        ? `Atoms coloured by ${d.what} saliency, from the least to the most salient atom: the attention the other ` +
          `atoms pay to each one (saliencies sum to 1; numbers are atom indices).`
        : `RDKit reads ${count} atoms, the model ${d.n}: atoms left uncoloured.`;
    } finally {
      mol.delete();
    }
  }

  clear(text: string): void {
    ++this.token;
    this.drawing.replaceChildren(h('p', { class: 'placeholder' }, text));
    this.drawing.dataset.drawn = 'false';
    this.drawing.dataset.highlighted = '0';
    this.drawing.setAttribute('aria-label', `Molecule: ${text}`);
    this.minLabel.textContent = '—';
    this.maxLabel.textContent = '—';
    this.note.textContent = '';
  }
}
