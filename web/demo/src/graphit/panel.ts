// The "Molecules (GraphiT)" panel: a SMILES string in (typed, or one of the examples); out come the committed
// GraphiT model's prediction, the molecule drawn by RDKit with its atoms coloured by attention saliency, the
// attention matrix of the selected layer (or their mean) and the kernel on the graph that modulates attention.
// The model runs in the wasm core in the worker; RDKit draws on the main thread. Below, the few-labels card refits
// the model's output layer on labelled molecules (refit_view.ts); the prediction then uses the new classes.

import './graphit.css';
import { h } from '../dom';
import { formatMs } from '../format';
import { LatestOnly } from '../latest_only';
import type { PanelContext } from '../panels';
import type { GraphitAnalyseRequest, GraphitAnalyseResponse, GraphitInfoResponse } from '../protocol';
import { toSolverError, type SolverError } from '../solver_client';
import { EXAMPLES } from './examples';
import { Heatmap } from './heatmap';
import { loadRDKit, MoleculeView } from './molecule_view';
import { RefitCard } from './refit_view';

const CUSTOM = 'custom';
const percent = (x: number): string => `${(100 * x).toFixed(1)}%`;

export function mountGraphitPanel(container: HTMLElement, ctx: PanelContext): void {
  const picker = h(
    'select',
    { id: 'graphit-example', 'data-testid': 'graphit-example' },
    ...EXAMPLES.map((ex, i) => h('option', { value: i }, `${ex.name} (${ex.kind})`)),
    h('option', { value: CUSTOM }, 'your molecule'),
  );
  const input = h('input', {
    id: 'graphit-smiles',
    'data-testid': 'graphit-smiles',
    type: 'text',
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'graphit-smiles-hint',
  });
  const layer = h('input', {
    id: 'graphit-layer',
    'data-testid': 'graphit-layer',
    type: 'range',
    min: 1,
    max: 2,
    step: 1,
    value: 2,
    disabled: true,
  });
  const layerLabel = h('output', { for: 'graphit-layer', 'data-testid': 'graphit-layer-label' }, 'mean over layers');
  const status = h(
    'p',
    {
      id: 'graphit-status',
      class: 'status',
      'data-testid': 'graphit-status',
      'data-state': 'loading',
      'data-seq': 0,
      role: 'status',
      'aria-live': 'polite',
    },
    'Loading the model…',
  );
  const predicted = h('strong', { 'data-testid': 'graphit-predicted-label' }, '—');
  const bars = h('div', { class: 'graphit-bars', 'data-testid': 'graphit-probabilities' });
  const details = h('p', { class: 'hint', 'data-testid': 'graphit-details' }, '');
  const modelInfo = h(
    'dl',
    { class: 'graphit-model', 'data-testid': 'graphit-model-info' },
    h('div', {}, h('dt', {}, 'file'), h('dd', {}, 'loading…')),
  );
  const errorCode = h('code', { id: 'graphit-error-code', 'data-testid': 'graphit-error-code' });
  const errorMessage = h('span', { id: 'graphit-error-message', 'data-testid': 'graphit-error-message' });
  const errorBox = h(
    'div',
    { id: 'graphit-error', class: 'error-box', 'data-testid': 'graphit-error', role: 'alert', hidden: true },
    h('strong', {}, 'The computation failed '),
    errorCode,
    h('p', {}, errorMessage),
  );

  const molecule = new MoleculeView();
  const attention = new Heatmap(
    'graphit-attention',
    'Attention',
    'Row i: how atom i spreads its attention over the atoms (each row sums to 1, averaged over the heads). Bright ' +
      'columns are the salient atoms.',
  );
  const kernel = new Heatmap(
    'graphit-kernel',
    'Kernel on the graph',
    'The kernel K that multiplies the attention scores (exp(QQᵀ/√d) ⊙ K, then row-normalised): it lets atoms attend ' +
      'mostly to atoms near them in the molecular graph.',
  );
  const kernelTitle = h('h3', { id: 'graphit-kernel-title' }, 'Kernel on the graph');
  // It calls back (to re-run the analysis with the model now in use) only after mounting: on a click or a restart.
  const refit = new RefitCard(ctx.solver, { modelChanged: () => analyse() });

  container.append(
    h(
      'header',
      { class: 'panel-header' },
      h('h2', {}, 'Molecules (GraphiT)'),
      h(
        'p',
        {},
        'GraphiT is a transformer on the atoms of a molecule whose attention is modulated by a kernel on the ',
        'molecular graph (here the diffusion kernel exp(−L)). The model, trained natively on MUTAG (mutagenicity of ',
        'nitroaromatic compounds), runs in the WebAssembly core inside a Web Worker; the molecule is parsed by the ',
        'same core and drawn by RDKit, each atom coloured by how much attention the other atoms pay to it.',
      ),
    ),
    errorBox,
    h(
      'div',
      { class: 'graphit-layout' },
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'graphit-input-title' },
          h('h3', { id: 'graphit-input-title' }, 'Molecule'),
          h('div', { class: 'row' }, h('label', { for: 'graphit-example' }, 'Example'), picker),
          input,
          h(
            'p',
            { class: 'hint', id: 'graphit-smiles-hint' },
            'A SMILES string. The model knows the atoms C, N, O, F, I, Cl and Br (hydrogens implicit); bond types ',
            'are ignored, as in the thesis.',
          ),
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'graphit-prediction-title' },
          h('h3', { id: 'graphit-prediction-title' }, 'Prediction'),
          h('p', { class: 'graphit-predicted' }, 'Predicted class: ', predicted),
          bars,
          details,
          status,
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'graphit-model-title' },
          h('h3', { id: 'graphit-model-title' }, 'Model'),
          modelInfo,
        ),
      ),
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'graphit-molecule-title' },
          h('h3', { id: 'graphit-molecule-title' }, 'Attention saliency on the molecule'),
          h('div', { class: 'row' }, h('label', { for: 'graphit-layer' }, 'Layer'), layer, layerLabel),
          molecule.element,
        ),
        h(
          'div',
          { class: 'graphit-heatmaps' },
          h(
            'section',
            { class: 'card', 'aria-labelledby': 'graphit-attention-title' },
            h('h3', { id: 'graphit-attention-title' }, 'Attention of the layer (mean over heads)'),
            attention.element,
          ),
          h('section', { class: 'card', 'aria-labelledby': 'graphit-kernel-title' }, kernelTitle, kernel.element),
        ),
      ),
      refit.element,
    ),
  );

  let seq = 0;
  let shown: GraphitAnalyseResponse | null = null;

  function setStatus(state: 'loading' | 'computing' | 'done' | 'error', text: string, settled = false): void {
    if (settled) status.dataset.seq = String(++seq);
    status.dataset.state = state;
    status.textContent = text;
  }

  function showError(err: SolverError): void {
    errorCode.textContent = err.code;
    errorMessage.textContent = err.message;
    errorBox.hidden = false;
    predicted.textContent = '—';
    bars.replaceChildren();
    details.textContent = '';
    shown = null;
    layer.disabled = true;
    molecule.clear('no molecule: see the error above');
    attention.clear('no attention');
    kernel.clear('no kernel');
    setStatus('error', `Failed: ${err.code}.`, true);
  }

  /** The selected layer (0-based), or -1 for the mean over layers. */
  function selectedLayer(res: GraphitAnalyseResponse): number {
    const v = Number(layer.value);
    return v >= 1 && v <= res.layers ? v - 1 : -1;
  }

  function drawLayer(): void {
    const res = shown;
    if (res === null) return;
    const l = selectedLayer(res);
    const n = res.n;
    const what = l < 0 ? 'mean over layers' : `layer ${l + 1}`;
    layerLabel.textContent = l < 0 ? 'mean over layers' : `layer ${l + 1} of ${res.layers}`;
    layer.setAttribute('aria-valuetext', layerLabel.textContent);
    const saliency = l < 0 ? res.meanSaliency : res.saliency.subarray(l * n, (l + 1) * n);
    let matrix: Float32Array;
    if (l >= 0) {
      matrix = res.attention.subarray(l * n * n, (l + 1) * n * n);
    } else {
      matrix = new Float32Array(n * n);
      for (let k = 0; k < res.layers; k++) {
        for (let i = 0; i < n * n; i++) matrix[i] += res.attention[k * n * n + i] / res.layers;
      }
    }
    attention.draw({ n, atoms: res.atoms, values: matrix });
    void molecule.draw({ smiles: res.smiles, n, atoms: res.atoms, saliency, what });
  }

  function showResult(res: GraphitAnalyseResponse, latest: boolean): void {
    shown = res;
    predicted.textContent = res.labels[res.classIndex] ?? '—';
    bars.replaceChildren(
      ...res.labels.map((label, c) => {
        const value = res.probabilities[c];
        const fill = h('span', { class: 'graphit-bar-fill' });
        fill.style.width = percent(value);
        return h(
          'div',
          { class: `graphit-bar${c === res.classIndex ? ' best' : ''}` },
          h('span', { class: 'graphit-bar-label' }, label),
          h('span', { class: 'graphit-bar-track' }, fill),
          h('output', { 'data-testid': `graphit-prob-${c}`, 'data-value': String(value) }, percent(value)),
        );
      }),
    );
    details.textContent =
      `${res.n} atoms, ${res.bonds.length} bonds; ${formatMs(res.computeMs)} ms in the worker` +
      (res.refitted ? '; output layer refitted in the page.' : '.');
    // The slider's last position is the mean over layers; it stays there when the layer count changes.
    const atMean = Number(layer.value) >= Number(layer.max);
    layer.max = String(res.layers + 1);
    if (atMean) layer.value = layer.max;
    layer.disabled = false;
    drawLayer();
    if (res.kernel) kernel.draw({ n: res.n, atoms: res.atoms, values: res.kernel });
    else kernel.clear('this model has no kernel (plain softmax attention)');
    if (!latest) return;
    errorBox.hidden = true;
    setStatus('done', `Analysed ${res.smiles}.`, true);
  }

  const runner = new LatestOnly<GraphitAnalyseRequest, GraphitAnalyseResponse>((req) => ctx.solver.solve(req), {
    onBusy: () => setStatus('computing', 'Computing…'),
    onSettled: (outcome, latest) => {
      if (outcome.ok) showResult(outcome.response, latest);
      else if (latest) showError(outcome.error);
    },
  });

  function analyse(): void {
    // Sent as typed (only surrounding white space trimmed): the library is the validator.
    runner.submit({ method: 'graphit-analyse', smiles: input.value.trim() });
  }

  picker.addEventListener('change', () => {
    const ex = EXAMPLES[Number(picker.value)];
    if (picker.value === CUSTOM || !ex) return;
    input.value = ex.smiles;
    analyse();
  });
  input.addEventListener('input', () => {
    picker.value = CUSTOM;
    analyse();
  });
  layer.addEventListener('input', drawLayer);

  input.value = EXAMPLES[0].smiles;
  void loadRDKit().catch(() => {}); // start fetching RDKit while the worker loads the model
  ctx.solver.solve({ method: 'graphit-info' }).then(
    (info) => {
      modelInfo.replaceChildren(
        ...describeModel(info).map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))),
      );
      if (info.kernel === null) kernelTitle.textContent = 'Kernel on the graph (none)';
      analyse();
    },
    (err: unknown) => {
      showError(toSolverError(err));
      modelInfo.replaceChildren(h('div', {}, h('dt', {}, 'file'), h('dd', {}, 'could not be loaded')));
    },
  );
}

function describeModel(info: GraphitInfoResponse): [string, string][] {
  return [
    ['file', `${info.fileName}, ${(info.fileBytes / 1024).toFixed(0)} KB`],
    ['written by', info.producer],
    ['atom types', info.nodeLabels.join(', ')],
    ['encoder', `${info.layers} layers × ${info.heads} heads, d = ${info.dim}`],
    ['kernel', info.kernel ?? 'none (softmax attention)'],
    ['classes', info.labels.join(', ')],
  ];
}
