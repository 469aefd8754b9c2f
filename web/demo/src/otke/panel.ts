// The "Sequences (OTKE)" panel: a DNA sequence in, the OTKE model's prediction, its transport plan onto the
// model's reference and its embedding out, all computed by the wasm core in the worker; plus the few-labels use
// case (label a few examples, fit a new head, see the prediction change, save the model).

import './otke.css';
import { download, h } from '../dom';
import { formatValue } from '../format';
import { LatestOnly } from '../latest_only';
import type { PanelContext } from '../panels';
import type {
  OtkeAnalyseRequest,
  OtkeAnalyseResponse,
  OtkeFitHeadResponse,
  OtkeInfoResponse,
  OtkeLearnResponse,
} from '../protocol';
import { toSolverError } from '../solver_client';
import { EmbeddingView } from './embedding_view';
import { LABEL_EXAMPLES, PICKER_EXAMPLES, sequenceFromInput, type Example } from './examples';
import { LabelsView } from './labels_view';
import { LearnView } from './learn_view';
import { PlanView } from './plan_view';
import { PredictionView } from './prediction_view';

const CUSTOM = 'custom';

export function mountOtkePanel(container: HTMLElement, ctx: PanelContext): void {
  const picker = h(
    'select',
    { id: 'otke-example', 'data-testid': 'otke-example' },
    ...PICKER_EXAMPLES.map((ex, i) => h('option', { value: i }, `${ex.name} (${ex.truth})`)),
    h('option', { value: CUSTOM }, 'your sequence'),
  );
  const input = h('textarea', {
    id: 'otke-sequence',
    'data-testid': 'otke-sequence',
    rows: 4,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'otke-sequence-hint',
  });
  const modelInfo = h(
    'dl',
    { class: 'otke-model', 'data-testid': 'otke-model-info' },
    h('div', {}, h('dt', {}, 'file'), h('dd', {}, 'loading…')),
  );
  const modelFile = h('input', {
    type: 'file',
    id: 'otke-model-file',
    'data-testid': 'otke-model-file',
    accept: '.safetensors',
  });
  const prediction = new PredictionView();
  const planView = new PlanView();
  const embeddingView = new EmbeddingView();
  let fitted: OtkeFitHeadResponse | null = null;
  let learnt: OtkeLearnResponse | null = null;
  let learning: AbortController | null = null;
  let fileInfo: OtkeInfoResponse | null = null;
  const showModel = (rows: [string, string][]): void => {
    modelInfo.replaceChildren(...rows.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))));
  };
  const showFileModel = (): void => {
    if (fileInfo) showModel(describeModel(fileInfo));
  };

  const labels = new LabelsView(LABEL_EXAMPLES, {
    show: (ex) => showExample(ex, -1),
    fit: (sequences, names, classes) => {
      labels.setBusy(`Fitting a head on ${sequences.length} labelled sequences…`);
      ctx.solver.solve({ method: 'otke-fit-head', sequences, names, labels: classes }).then(
        (res) => {
          fitted = res;
          learnt = null;
          labels.showFit(res);
          analyse();
        },
        (err: unknown) => {
          const e = toSolverError(err);
          prediction.showSideError(e);
          labels.showError(e.code);
        },
      );
    },
    reset: () => {
      reset();
    },
    save: () => save(),
  });

  const learn = new LearnView({
    learn: (request, onProgress) => {
      learning = new AbortController();
      ctx.solver
        .solve(request, { onProgress, signal: learning.signal })
        .then(
          (res) => {
            learnt = res;
            fitted = null;
            learn.showLearnt(res);
            showModel(describeLearnt(res));
            analyse();
          },
          (err: unknown) => {
            const e = toSolverError(err);
            if (e.code === 'cancelled') learn.showCancelled(ctx.solver.cancelMode === 'restart-worker');
            else learn.showError(e.code, e.message);
          },
        )
        .finally(() => {
          learning = null;
        });
    },
    cancel: () => learning?.abort(),
    reset: () => reset(),
    save: () => save(),
  });
  // Without shared memory a cancel restarts the worker, which then holds the committed model again.
  ctx.solver.onRestart(() => {
    fitted = null;
    learnt = null;
    // A restarted worker holds the committed model again, whatever file was opened before.
    ctx.solver.solve({ method: 'otke-info' }).then(
      (info) => {
        fileInfo = info;
        showFileModel();
      },
      (err: unknown) => prediction.showSideError(toSolverError(err)),
    );
    labels.showReset();
    analyse();
  });

  function reset(): void {
    ctx.solver.solve({ method: 'otke-reset-head' }).then(
      () => {
        fitted = null;
        learnt = null;
        showFileModel();
        labels.showReset();
        learn.showReset();
        analyse();
      },
      (err: unknown) => prediction.showSideError(toSolverError(err)),
    );
  }

  function save(): void {
    ctx.solver.solve({ method: 'otke-save' }).then(
      (res) => {
        const name = res.learnt
          ? 'otke-learnt.safetensors'
          : res.fitted
            ? 'otke-promoters-ecoli.fitted-head.safetensors'
            : 'otke-promoters-ecoli.safetensors';
        download(res.bytes, name);
      },
      (err: unknown) => prediction.showSideError(toSolverError(err)),
    );
  }

  container.append(
    h(
      'header',
      { class: 'panel-header' },
      h('h2', {}, 'Sequences (OTKE)'),
      h(
        'p',
        {},
        'The optimal transport kernel embedding of a DNA sequence: its one-hot k-mers go through a Nyström kernel ',
        'map, are transported (entropic OT, log-domain Sinkhorn) onto a learned reference of p supports, and pooled ',
        'along the plan into one vector Φ(x) for a linear classifier. The model, fitted natively on E. coli ',
        'promoters, runs in the WebAssembly core inside a Web Worker.',
      ),
    ),
    prediction.errorBox,
    h(
      'div',
      { class: 'otke-layout' },
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'otke-input-title' },
          h('h3', { id: 'otke-input-title' }, 'Sequence'),
          h('div', { class: 'row' }, h('label', { for: 'otke-example' }, 'Example'), picker),
          input,
          h(
            'p',
            { class: 'hint', id: 'otke-sequence-hint' },
            'Paste DNA letters (A, C, G, T, any case) or FASTA: header lines and white space are dropped, ',
            'everything else goes to the library as typed.',
          ),
        ),
        prediction.element,
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'otke-model-title' },
          h('h3', { id: 'otke-model-title' }, 'Model'),
          modelInfo,
          h('div', { class: 'row' }, h('label', { for: 'otke-model-file' }, 'Open a model file'), modelFile),
          h('p', { class: 'hint' }, 'One that inductive otke fit or train wrote (natively, on a GPU, or in a page).'),
        ),
      ),
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'otke-plan-title' },
          h('h3', { id: 'otke-plan-title' }, 'Transport plan: sequence positions × reference supports'),
          planView.element,
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'otke-embedding-title' },
          h('h3', { id: 'otke-embedding-title' }, 'Embedding Φ(x)'),
          embeddingView.element,
        ),
      ),
      labels.element,
      learn.element,
    ),
  );

  let inputName = PICKER_EXAMPLES[0].name;
  const runner = new LatestOnly<OtkeAnalyseRequest, OtkeAnalyseResponse>((req) => ctx.solver.solve(req), {
    onBusy: () => prediction.setBusy(),
    onSettled: (outcome, latest) => {
      if (outcome.ok) {
        const res = outcome.response;
        const head =
          learnt !== null
            ? `learnt here with the model (${learnt.labelled} labelled sequences, λ = ${learnt.lambda})`
            : fitted === null
              ? null
              : LabelsView.describe(fitted);
        prediction.showResult(res, outcome.request.name, head, latest);
        planView.draw({ sequence: outcome.request.sequence, plans: res.plans, n: res.n, p: res.p, q: res.q, k: res.k });
        embeddingView.draw({ embedding: res.embedding, p: res.p, q: res.q, anchors: res.anchors, reference: 0 });
      } else if (latest) {
        prediction.showError(outcome.error);
        planView.clear('no plan: see the error above');
        embeddingView.clear('no embedding');
      }
    },
  });

  function analyse(): void {
    runner.submit({ method: 'otke-analyse', sequence: sequenceFromInput(input.value), name: inputName });
  }

  function showExample(ex: Example, pickerIndex: number): void {
    input.value = ex.sequence;
    inputName = ex.name;
    picker.value = pickerIndex >= 0 ? String(pickerIndex) : CUSTOM;
    analyse();
  }

  picker.addEventListener('change', () => {
    const i = Number(picker.value);
    if (picker.value !== CUSTOM && PICKER_EXAMPLES[i]) showExample(PICKER_EXAMPLES[i], i);
  });
  input.addEventListener('input', () => {
    picker.value = CUSTOM;
    inputName = 'input';
    analyse();
  });

  // The user's model replaces the committed one (in the worker, which reads the file); a refused file changes nothing.
  modelFile.addEventListener('change', () => {
    const file = modelFile.files?.[0];
    if (!file) return;
    ctx.solver.solve({ method: 'otke-open', file, name: file.name }).then(
      (res) => {
        fileInfo = res.info;
        fitted = null;
        learnt = null;
        showFileModel();
        labels.setClasses(res.info.labels);
        labels.showReset();
        learn.showReset();
        analyse();
      },
      (err: unknown) => prediction.showSideError(toSolverError(err)),
    );
  });

  input.value = PICKER_EXAMPLES[0].sequence;
  ctx.solver.solve({ method: 'otke-info' }).then(
    (info) => {
      fileInfo = info;
      showModel(describeModel(info));
      labels.setClasses(info.labels);
      analyse();
    },
    (err: unknown) => {
      prediction.showError(toSolverError(err));
      modelInfo.replaceChildren(h('div', {}, h('dt', {}, 'file'), h('dd', {}, 'could not be loaded')));
      planView.clear('no model');
      embeddingView.clear('no model');
    },
  );
}

/** What the model is, as term/value pairs (numbers as the file stores them, float32 noise rounded off). */
function describeModel(info: OtkeInfoResponse): [string, string][] {
  const rows: [string, string][] = [
    ['file', `${info.fileName}, ${(info.fileBytes / 1024).toFixed(0)} KB`],
    ['written by', info.producer],
    ['local features', `one-hot k-mers, k = ${info.k}`],
    ['Nyström anchors', `K = ${info.anchors}`],
    [
      'references',
      `${info.q} × ${info.p} supports, ε = ${formatValue(info.eps, 3)}, ${info.iters} Sinkhorn iterations` +
        (info.sigmaPos > 0 ? `, positional σ = ${formatValue(info.sigmaPos, 3)}` : ''),
    ],
    ['embedding Φ', `${info.outputDim} dimensions`],
    ['classes', info.labels.join(', ')],
  ];
  return rows;
}

/** The model learnt in the page, as term/value pairs like the file's. */
function describeLearnt(res: OtkeLearnResponse): [string, string][] {
  return [
    ['file', `none yet: learnt in this page from ${res.sequences} sequences (Save model writes it)`],
    ['written by', 'this page (inductive wasm)'],
    ['local features', `one-hot k-mers, k = ${res.k}`],
    ['Nyström anchors', `K = ${res.anchors}`],
    ['references', `1 × ${res.p} supports`],
    ['embedding Φ', `${res.outputDim} dimensions`],
    ['classes', res.labels.join(', ')],
  ];
}
