// The "Screening" panel: safe sample screening (thesis ch. 4) of a bundled dataset or a dropped LIBSVM/CSV file.
// The worker solves the regularised ERM problem to a certified duality gap with dynamic gap-safe screening and
// applies the static test at the solution; the page shows how the fraction of samples screened grows over the
// epochs, the static scores, and, for the one-feature interval-regression set, which samples were screened.

import './screening.css';
import { h } from '../dom';
import { formatMs, formatSmall, formatValue } from '../format';
import { LatestOnly } from '../latest_only';
import { CompressionView } from './compression_view';
import { PathView } from './path_view';
import { epsFromStep } from '../ot/eps_scale';
import type { PanelContext } from '../panels';
import type { ScreeningDatasetInfo, ScreeningRunRequest, ScreeningRunResponse, ScreeningSourceId } from '../protocol';
import { toSolverError, type SolverError } from '../solver_client';
import { HistoryChart, IntervalPicture, ScoreHistogram } from './charts';
import { BUILTIN_SOURCES, guessFormat, intervalData } from './datasets';

const LOSSES = ['squared_hinge', 'hinge', 'safe_logistic', 'logistic', 'interval_regression', 'squared'];
/** The losses with a flat-region parameter mu (the others refuse a non-zero one). */
const WITH_MU = new Set(['squared_hinge', 'hinge', 'safe_logistic', 'interval_regression']);
const PENALTIES = ['l2', 'l1', 'elastic_net'];
/** lambda = 10^(step / 10) on the R10 series (as the OT panel's eps): 1e-5 .. 10. */
const LAMBDA_STEP_MIN = -50;
const LAMBDA_STEP_MAX = 10;
const TOL = 1e-9;
const MAX_EPOCHS = 1000;
const NONE = '';

const stepOf = (lambda: number): number => Math.round(10 * Math.log10(lambda));

type Status = 'loading' | 'computing' | 'done' | 'error' | 'cancelled';

interface Settings {
  source: ScreeningSourceId;
  seed: number;
  loss: string;
  penalty: string;
  lambdaStep: number;
  mu: number;
  intercept: boolean;
  positive: number | null;
  ellipsoidSteps: number;
}

export function mountScreeningPanel(container: HTMLElement, ctx: PanelContext): void {
  const first = BUILTIN_SOURCES[0];
  const s: Settings = {
    source: first.id,
    seed: 7,
    loss: first.defaults.loss,
    penalty: first.defaults.penalty,
    lambdaStep: stepOf(first.defaults.lambda),
    mu: first.defaults.mu,
    intercept: first.defaults.intercept,
    positive: first.defaults.positive,
    ellipsoidSteps: 0,
  };
  /** The last description of each source's dataset (labels for the one-vs-rest choice). */
  const infos = new Map<ScreeningSourceId, ScreeningDatasetInfo>();

  // ---- inputs ----
  const fileOption = h('option', { value: 'file', disabled: true }, 'your file (drop one below)');
  const source = h(
    'select',
    { id: 'screening-source', 'data-testid': 'screening-source' },
    ...BUILTIN_SOURCES.map((src) => h('option', { value: src.id }, src.title)),
    fileOption,
  );
  const seed = h('input', {
    id: 'screening-seed',
    'data-testid': 'screening-seed',
    type: 'number',
    min: 0,
    step: 1,
    value: s.seed,
  });
  const seedRow = h(
    'div',
    { class: 'row', hidden: true },
    h('label', { for: 'screening-seed' }, 'Seed'),
    seed,
    h('span', { class: 'hint inline' }, `y = 0.7 x + 0.2 + noise`),
  );
  const fileInput = h('input', {
    id: 'screening-file',
    'data-testid': 'screening-file',
    type: 'file',
    accept: '.csv,.gz,.txt,.svm,.libsvm,.svmlight,.data,text/plain,text/csv,application/gzip',
  });
  const format = h(
    'select',
    { id: 'screening-format', 'data-testid': 'screening-format' },
    h('option', { value: 'auto' }, 'format from the name'),
    h('option', { value: 'libsvm' }, 'LIBSVM'),
    h('option', { value: 'csv' }, 'CSV (label last)'),
  );
  const header = h('input', { id: 'screening-header', 'data-testid': 'screening-header', type: 'checkbox' });
  const drop = h(
    'div',
    { class: 'screening-drop', 'data-testid': 'screening-drop' },
    h(
      'p',
      {},
      'Drop a LIBSVM or CSV file here (gzip allowed), or ',
      h('label', { for: 'screening-file', class: 'file-label' }, 'choose one'),
      '.',
    ),
    fileInput,
    h('div', { class: 'row' }, format, h('label', {}, header, ' CSV header line')),
  );

  const loss = h(
    'select',
    { id: 'screening-loss', 'data-testid': 'screening-loss' },
    ...LOSSES.map((l) => h('option', { value: l }, l.replace('_', ' '))),
  );
  const penalty = h(
    'select',
    { id: 'screening-penalty', 'data-testid': 'screening-penalty' },
    ...PENALTIES.map((p) => h('option', { value: p }, p.replace('_', ' '))),
  );
  const lambda = h('input', {
    id: 'screening-lambda',
    'data-testid': 'screening-lambda',
    type: 'range',
    min: LAMBDA_STEP_MIN,
    max: LAMBDA_STEP_MAX,
    step: 1,
    value: s.lambdaStep,
    'aria-describedby': 'screening-lambda-value',
  });
  const lambdaValue = h('output', {
    id: 'screening-lambda-value',
    'data-testid': 'screening-lambda-value',
    for: 'screening-lambda',
  });
  const mu = h('input', {
    id: 'screening-mu',
    'data-testid': 'screening-mu',
    type: 'range',
    min: 0,
    max: 0.95,
    step: 0.01,
    value: s.mu,
  });
  const muValue = h('output', { id: 'screening-mu-value', 'data-testid': 'screening-mu-value', for: 'screening-mu' });
  const intercept = h('input', { id: 'screening-intercept', 'data-testid': 'screening-intercept', type: 'checkbox' });
  const positive = h('select', { id: 'screening-positive', 'data-testid': 'screening-positive' });
  const ellipsoidSteps = h('input', {
    id: 'screening-ellipsoid-steps',
    'data-testid': 'screening-ellipsoid-steps',
    type: 'number',
    min: 0,
    max: 200,
    step: 1,
    value: 0,
  });

  // ---- outputs ----
  const status = h(
    'p',
    {
      id: 'screening-status',
      class: 'status',
      'data-testid': 'screening-status',
      'data-state': 'loading',
      'data-seq': 0,
      role: 'status',
      'aria-live': 'polite',
    },
    'Loading…',
  );
  const errorCode = h('code', { id: 'screening-error-code', 'data-testid': 'screening-error-code' });
  const errorMessage = h('span', { id: 'screening-error-message', 'data-testid': 'screening-error-message' });
  const errorBox = h(
    'div',
    { id: 'screening-error', class: 'error-box', 'data-testid': 'screening-error', role: 'alert', hidden: true },
    h('strong', {}, 'The computation failed '),
    errorCode,
    h('p', {}, errorMessage),
  );
  const stats = h('dl', { class: 'stats', 'data-testid': 'screening-stats' });
  // Large dropped files take seconds: the run in flight can be cancelled (the library's solver stops at its next
  // gap check; without shared memory the worker restarts and a dropped file must be dropped again).
  const cancelButton = h(
    'button',
    { type: 'button', class: 'secondary', 'data-testid': 'screening-cancel', disabled: true },
    'Cancel',
  );
  const progress = h('progress', { 'data-testid': 'screening-progress', max: 1, value: 0, hidden: true });
  const bigFraction = h(
    'output',
    { class: 'screening-big', 'data-testid': 'screening-fraction', 'data-value': '' },
    '—',
  );
  const history = new HistoryChart();
  const histogram = new ScoreHistogram();
  const picture = new IntervalPicture();
  const pictureNote = h('p', { class: 'hint', 'data-testid': 'screening-picture-note' });
  // The path runs with the settings of the moment it is started (the state `s`, read on click).
  const pathView = new PathView({
    run: (onProgress, signal, workingSet) =>
      ctx.solver.solve(
        {
          method: 'screening-path',
          ...problemSettings(),
          lambdaMax: 1,
          ratio: 1e-3,
          count: 20,
          workingSet,
        },
        { onProgress, signal },
      ),
  });

  // The compression curves likewise, at the current lambda.
  const compressionView = new CompressionView({
    run: (onProgress, signal) =>
      ctx.solver.solve(
        {
          method: 'screening-compress',
          ...problemSettings(),
          lambda: lambdaOf(s.lambdaStep),
          fractions: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
        },
        { onProgress, signal },
      ),
  });

  container.append(
    h(
      'header',
      { class: 'panel-header' },
      h('h2', {}, 'Safe sample screening'),
      h(
        'p',
        {},
        'Regularised empirical risk minimisation with a loss that is flat where a sample is fitted well enough: ',
        'such a sample has a zero dual variable at the optimum and can be removed without changing the solution. ',
        'The WebAssembly core solves the problem to a certified duality gap, removes samples as soon as a gap-safe ',
        'region around the iterate proves them flat (dynamic screening), then applies the static test at the ',
        'solution. Every sample reported as screened is certified, never guessed.',
      ),
    ),
    errorBox,
    h(
      'div',
      { class: 'screening-layout' },
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-data-title' },
          h('h3', { id: 'screening-data-title' }, 'Data'),
          h('div', { class: 'row' }, h('label', { for: 'screening-source' }, 'Dataset'), source),
          seedRow,
          drop,
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-problem-title' },
          h('h3', { id: 'screening-problem-title' }, 'Problem: 1/n Σ loss(tᵢ) + λ R(w)'),
          h('div', { class: 'row' }, h('label', { for: 'screening-loss' }, 'Loss'), loss),
          h(
            'div',
            { class: 'row' },
            h('label', { for: 'screening-penalty' }, 'Penalty R'),
            penalty,
            h('label', {}, intercept, ' intercept'),
          ),
          h('div', { class: 'field' }, h('label', { for: 'screening-lambda' }, 'λ (log scale)'), lambdaValue),
          lambda,
          h('div', { class: 'scale' }, h('span', {}, '1e-5'), h('span', {}, '10')),
          h(
            'div',
            { class: 'field' },
            h('label', { for: 'screening-mu' }, 'μ: flat region (t > 1 − μ, or |t| < μ)'),
            muValue,
          ),
          mu,
          h(
            'div',
            { class: 'row' },
            h('label', { for: 'screening-positive' }, 'Positive class (one vs rest)'),
            positive,
          ),
          h(
            'div',
            { class: 'row' },
            h('label', { for: 'screening-ellipsoid-steps' }, 'Ellipsoid-method steps (static test)'),
            ellipsoidSteps,
          ),
          h('p', { class: 'hint' }, `R = ‖w‖² (no ½) or ‖w‖₁; stopped at a relative duality gap of ${TOL}.`),
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-result-title' },
          h('h3', { id: 'screening-result-title' }, 'Result'),
          h('p', { class: 'screening-headline' }, bigFraction, h('span', {}, ' of the samples screened')),
          h('div', { class: 'row' }, status, cancelButton),
          progress,
          stats,
        ),
      ),
      h(
        'div',
        { class: 'column' },
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-history-title' },
          h('h3', { id: 'screening-history-title' }, 'Fraction screened over the epochs'),
          history.element,
          h(
            'p',
            { class: 'hint' },
            'After each duality-gap check: 1 − active / n (left axis); the gap (grey, log scale, ',
            'right axis). The dashed line adds the static test at the solution.',
          ),
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-histogram-title' },
          h('h3', { id: 'screening-histogram-title' }, 'Static screening scores at the solution'),
          histogram.element,
          h(
            'p',
            { class: 'hint' },
            h('span', { class: 'swatch swatch-screened' }),
            'screened ',
            h('span', { class: 'swatch swatch-kept' }),
            'kept. A score > 0 proves the sample flat at the optimum.',
          ),
        ),
        h(
          'section',
          { class: 'card', 'aria-labelledby': 'screening-picture-title' },
          h('h3', { id: 'screening-picture-title' }, 'Interval regression: easy and hard samples'),
          picture.element,
          pictureNote,
        ),
        pathView.element,
        compressionView.element,
      ),
    ),
  );

  // ---- behaviour ----
  let seq = 0;
  function setStatus(state: Status, text: string, settled: boolean): void {
    if (settled) {
      seq += 1;
      status.dataset.seq = String(seq);
    }
    status.dataset.state = state;
    status.textContent = text;
  }

  function showError(e: SolverError): void {
    errorCode.textContent = e.code;
    errorMessage.textContent = e.message;
    errorBox.hidden = false;
  }

  function clearResults(text: string): void {
    bigFraction.textContent = '—';
    bigFraction.dataset.value = '';
    stats.replaceChildren();
    history.clear(text);
    histogram.clear(text);
    picture.clear(text);
    pictureNote.textContent = '';
  }

  function lambdaOf(step: number): number {
    return epsFromStep(step);
  }

  function syncInputs(): void {
    source.value = s.source;
    seedRow.hidden = s.source !== 'interval';
    seed.value = String(s.seed);
    loss.value = s.loss;
    penalty.value = s.penalty;
    lambda.value = String(s.lambdaStep);
    lambdaValue.textContent = String(lambdaOf(s.lambdaStep));
    mu.value = String(s.mu);
    mu.disabled = !WITH_MU.has(s.loss);
    muValue.textContent = WITH_MU.has(s.loss) ? String(s.mu) : `— (${s.loss} has none)`;
    intercept.checked = s.intercept;
    syncPositive();
  }

  /** The one-vs-rest choices: the dataset's labels when known (and the current choice in any case). */
  function syncPositive(): void {
    const labels = infos.get(s.source)?.labels ?? [];
    const values = [...new Set([...labels, ...(s.positive === null ? [] : [s.positive])])].sort((a, b) => a - b);
    positive.replaceChildren(
      h('option', { value: NONE }, 'none: labels as given'),
      ...values.map((v) => h('option', { value: String(v) }, `${v} vs rest`)),
    );
    positive.value = s.positive === null ? NONE : String(s.positive);
  }

  let inFlight: AbortController | null = null;
  const solveCancellable = (req: ScreeningRunRequest): Promise<ScreeningRunResponse> => {
    const controller = new AbortController();
    inFlight = controller;
    cancelButton.disabled = false;
    progress.value = 0;
    return ctx.solver
      .solve(req, {
        signal: controller.signal,
        onProgress: (_, fraction) => {
          progress.hidden = false;
          progress.value = fraction;
          progress.dataset.stage = 'solve';
        },
      })
      .finally(() => {
        if (inFlight !== controller) return;
        inFlight = null;
        cancelButton.disabled = true;
        progress.hidden = true;
      });
  };
  cancelButton.addEventListener('click', () => inFlight?.abort());
  ctx.solver.onRestart(() => {
    // The new worker reloads the bundled sets on first use; a dropped file is gone with the old one.
    if (infos.has('file')) {
      infos.delete('file');
      fileOption.disabled = true;
      fileOption.textContent = 'your file (drop it again: the worker was restarted)';
    }
  });

  const runner = new LatestOnly<ScreeningRunRequest, ScreeningRunResponse>(solveCancellable, {
    onBusy: () => setStatus('computing', 'Solving and screening…', false),
    onSettled: (outcome, latest) => {
      if (!outcome.ok) {
        if (!latest) return;
        if (outcome.error.code === 'cancelled') {
          setStatus('cancelled', 'Cancelled: the results shown are those of the last completed run.', true);
          return;
        }
        showError(outcome.error);
        clearResults('no result: see the error above');
        setStatus('error', `Failed: ${outcome.error.code}.`, true);
        return;
      }
      const req = outcome.request;
      const res = outcome.response;
      infos.set(res.dataset.source, res.dataset);
      if (latest) syncPositive();
      show(req, res);
      if (!latest) return;
      errorBox.hidden = true;
      status.dataset.lambda = String(req.lambda);
      status.dataset.source = req.source;
      setStatus('done', `Screened ${res.dataset.name} with λ = ${req.lambda}.`, true);
    },
  });

  function show(req: ScreeningRunRequest, res: ScreeningRunResponse): void {
    const d = res.dataset;
    bigFraction.textContent = `${(100 * res.fractionScreened).toFixed(1)}%`;
    bigFraction.dataset.value = String(res.fractionScreened);
    const row = (term: string, value: string, testid: string, extra: Record<string, string> = {}): HTMLElement =>
      h('div', { class: 'stat' }, h('dt', {}, term), h('dd', { 'data-testid': testid, ...extra }, value));
    stats.replaceChildren(
      row('dataset', d.name, 'screening-dataset'),
      row('samples n × features p', `${d.n} × ${d.p}`, 'screening-shape', {
        'data-n': String(d.n),
        'data-p': String(d.p),
      }),
      row('storage', d.sparse ? `sparse, ${d.nnz} non-zeros` : 'dense', 'screening-storage'),
      row('screened', `${res.nScreened} of ${d.n}`, 'screening-n-screened', { 'data-value': String(res.nScreened) }),
      row('  by dynamic screening / static test', `${res.nDynamic} / ${res.nStatic}`, 'screening-split'),
      row(
        '  static test: balls / with ellipsoid steps',
        `${res.nStaticByBalls} / ${res.nStatic} (${res.ellipsoidSteps} steps)`,
        'screening-static-split',
        { 'data-balls': String(res.nStaticByBalls), 'data-steps': String(res.ellipsoidSteps) },
      ),
      row('epochs', String(res.epochs), 'screening-epochs'),
      row('converged', String(res.converged), 'screening-converged', { 'data-converged': String(res.converged) }),
      row('duality gap', res.gap === null ? '—' : formatSmall(res.gap), 'screening-gap'),
      row('objective P(w)', res.primal === null ? '—' : formatValue(res.primal, 6), 'screening-primal'),
      row(
        'solve / screen / worker',
        `${formatMs(1000 * res.solveSeconds)} / ${formatMs(1000 * res.screenSeconds)} / ` +
          `${formatMs(res.computeMs)} ms`,
        'screening-time',
      ),
    );
    history.draw({
      n: d.n,
      epochs: res.historyEpoch,
      active: res.historyActive,
      gap: res.historyGap,
      finalFraction: res.fractionScreened,
    });
    histogram.draw(res.scores, res.screened);
    if (req.source === 'interval' && d.p === 1) {
      const { x, y } = intervalData(req.seed);
      const width = req.mu ?? 0;
      picture.draw({ x, y, mu: width, slope: res.coefficients[0], intercept: res.intercept, screened: res.screened });
      pictureNote.textContent =
        `${res.nScreened} of ${d.n} intervals screened: the fitted line passes strictly inside ` +
        `them (|w x + b − y| < μ = ${width}), so they do not affect the fit. ` +
        (req.loss === 'interval_regression' ? '' : "Pick the interval regression loss to see the thesis' picture.");
    } else {
      picture.clear('drawn for the synthetic interval-regression set');
      pictureNote.textContent =
        'Pick “Interval regression (synthetic)” above: one feature, so each sample is an interval ' +
        '[y − μ, y + μ] above its x, and the fit a line.';
    }
  }

  // The problem as the controls set it now (all but lambda), for a run, a path or the compression curves.
  function problemSettings(): Omit<ScreeningRunRequest, 'method' | 'lambda'> {
    return {
      source: s.source,
      seed: s.seed,
      loss: s.loss,
      penalty: s.penalty,
      mu: WITH_MU.has(s.loss) ? s.mu : null,
      intercept: s.intercept,
      positive: s.positive,
      tol: TOL,
      maxEpochs: MAX_EPOCHS,
      ellipsoidSteps: s.ellipsoidSteps,
    };
  }

  function run(): void {
    runner.submit({
      method: 'screening-run',
      ...problemSettings(),
      lambda: lambdaOf(s.lambdaStep),
    });
  }

  function pickSource(id: ScreeningSourceId): void {
    s.source = id;
    const builtin = BUILTIN_SOURCES.find((src) => src.id === id);
    if (builtin) {
      s.loss = builtin.defaults.loss;
      s.penalty = builtin.defaults.penalty;
      s.lambdaStep = stepOf(builtin.defaults.lambda);
      s.mu = builtin.defaults.mu;
      s.intercept = builtin.defaults.intercept;
      s.positive = builtin.defaults.positive;
    }
    syncInputs();
    run();
  }

  async function loadFile(file: File): Promise<void> {
    const fmt = format.value === 'auto' ? guessFormat(file.name) : (format.value as 'libsvm' | 'csv');
    setStatus('computing', `Reading ${file.name}…`, false);
    try {
      const res = await ctx.solver.solve({
        method: 'screening-load-file',
        name: file.name,
        file,
        format: fmt,
        header: header.checked,
      });
      const d = res.dataset;
      infos.set('file', d);
      fileOption.disabled = false;
      fileOption.textContent = `your file: ${d.name} (${d.n} × ${d.p})`;
      s.source = 'file';
      // Many classes: one vs rest on the last one; continuous targets: a regression loss.
      s.positive = d.labels !== null && d.labels.length > 2 ? d.labels[d.labels.length - 1] : null;
      if (d.labels === null && !['interval_regression', 'squared'].includes(s.loss)) {
        s.loss = 'interval_regression';
        s.mu = 0.1;
      }
      syncInputs();
      run();
    } catch (err) {
      const e = toSolverError(err);
      showError(e);
      clearResults(`no result: ${file.name} could not be read`);
      setStatus('error', `Failed to read ${file.name}: ${e.code}.`, true);
    }
  }

  source.addEventListener('change', () => pickSource(source.value as ScreeningSourceId));
  seed.addEventListener('change', () => {
    s.seed = Number(seed.value);
    run();
  });
  loss.addEventListener('change', () => {
    s.loss = loss.value;
    syncInputs();
    run();
  });
  penalty.addEventListener('change', () => {
    s.penalty = penalty.value;
    run();
  });
  intercept.addEventListener('change', () => {
    s.intercept = intercept.checked;
    run();
  });
  ellipsoidSteps.addEventListener('change', () => {
    // The static test after the gap and l1 balls: each step cuts the smaller ball's ellipsoid through its centre.
    const v = Math.round(ellipsoidSteps.valueAsNumber);
    s.ellipsoidSteps = Number.isFinite(v) ? Math.min(200, Math.max(0, v)) : 0;
    ellipsoidSteps.value = String(s.ellipsoidSteps);
    run();
  });
  positive.addEventListener('change', () => {
    s.positive = positive.value === NONE ? null : Number(positive.value);
    run();
  });
  lambda.addEventListener('input', () => {
    s.lambdaStep = Number(lambda.value);
    lambdaValue.textContent = String(lambdaOf(s.lambdaStep));
    run();
  });
  mu.addEventListener('input', () => {
    s.mu = Number(mu.value);
    muValue.textContent = String(s.mu);
    run();
  });
  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) void loadFile(file);
    fileInput.value = '';
  });
  drop.addEventListener('dragover', (event) => {
    event.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const file = event.dataTransfer?.files[0];
    if (file) void loadFile(file);
  });

  syncInputs();
  clearResults('computing…');
  run();
}
