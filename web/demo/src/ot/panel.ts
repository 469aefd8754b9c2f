// The "Optimal transport" panel: two weighted point clouds, entropic OT between them solved by the wasm core in
// the worker, and the plan shown as lines and as a heatmap. Every input change re-solves; LatestOnly keeps that
// responsive while the slider is dragged.

import { h } from '../dom';
import { LatestOnly } from '../latest_only';
import type { PanelContext } from '../panels';
import type { OtRequest, OtResponse } from '../protocol';
import { EPS_STEP_DEFAULT, EPS_STEP_MAX, EPS_STEP_MIN, epsFromStep, formatEps } from './eps_scale';
import { HeatmapView } from './heatmap_view';
import { checkMarginals } from './marginals';
import { normalisedWeights, packXy, randomClouds, type Clouds, type Point } from './points';
import { ResultView } from './result_view';
import { SceneView } from './scene_view';

const SEED_DEFAULT = 1;
// eps = 0.001 needs ~500 iterations on these clouds; the limit only bites on much larger or odder point sets.
const MAX_ITER_DEFAULT = 1000;
// L1 marginal error. Much below 1e-5 the float32 plan itself cannot get there reliably at small eps (its row and
// column sums carry rounding of about 1e-7 x |potential / eps|), and the page would report converged = no.
const TOL_DEFAULT = 1e-5;

/** A request plus the point snapshot it was made from, so lines are drawn where the points were when solved. */
interface OtJob {
  request: OtRequest;
  source: Point[];
  target: Point[];
  eps: number;
}

export function mountOtPanel(container: HTMLElement, ctx: PanelContext): void {
  let clouds: Clouds = randomClouds(SEED_DEFAULT);

  const seedInput = h('input', {
    id: 'ot-seed',
    'data-testid': 'ot-seed',
    type: 'number',
    min: 0,
    step: 1,
    value: SEED_DEFAULT,
    inputmode: 'numeric',
  });
  const randomButton = h('button', { type: 'button', id: 'ot-random', 'data-testid': 'ot-random' }, 'Random');
  const clearButton = h(
    'button',
    { type: 'button', id: 'ot-clear', 'data-testid': 'ot-clear', class: 'secondary' },
    'Clear points',
  );
  const nCount = h('output', { id: 'ot-n', 'data-testid': 'ot-n' });
  const pCount = h('output', { id: 'ot-p', 'data-testid': 'ot-p' });
  const epsInput = h('input', {
    id: 'ot-eps',
    'data-testid': 'ot-eps',
    type: 'range',
    min: EPS_STEP_MIN,
    max: EPS_STEP_MAX,
    step: 1,
    value: EPS_STEP_DEFAULT,
  });
  const epsOutput = h('output', { id: 'ot-eps-value', 'data-testid': 'ot-eps-value', for: 'ot-eps' });
  const maxIterInput = h('input', {
    id: 'ot-max-iter',
    'data-testid': 'ot-max-iter',
    type: 'number',
    min: 1,
    step: 1,
    value: MAX_ITER_DEFAULT,
  });
  const tolInput = h('input', {
    id: 'ot-tol',
    'data-testid': 'ot-tol',
    type: 'number',
    step: 'any',
    value: TOL_DEFAULT.toExponential(),
  });

  const scene = new SceneView((x, y, toTarget) => {
    // A clicked point gets weight 1, the mean weight of the random clouds, so it looks like its neighbours.
    (toTarget ? clouds.target : clouds.source).push({ x, y, w: 1 });
    solve();
  });
  const heatmap = new HeatmapView();
  const results = new ResultView();

  const controls = h(
    'section',
    { class: 'card controls', 'aria-labelledby': 'ot-controls-title' },
    h('h3', { id: 'ot-controls-title' }, 'Inputs'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Point clouds'),
      h('div', { class: 'row' }, h('label', { for: 'ot-seed' }, 'Seed'), seedInput, randomButton),
      h(
        'p',
        { class: 'counts' },
        h('span', { class: 'swatch swatch-source', 'aria-hidden': 'true' }),
        nCount,
        ' source · ',
        h('span', { class: 'swatch swatch-target', 'aria-hidden': 'true' }),
        pCount,
        ' target',
      ),
      clearButton,
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Sinkhorn'),
      h('div', { class: 'field' }, h('label', { for: 'ot-eps' }, 'Regularisation ε'), epsOutput),
      epsInput,
      h(
        'div',
        { class: 'scale', 'aria-hidden': 'true' },
        h('span', {}, '0.001'),
        h('span', {}, '0.1'),
        h('span', {}, '10'),
      ),
      h('div', { class: 'field' }, h('label', { for: 'ot-max-iter' }, 'Max iterations'), maxIterInput),
      h('div', { class: 'field' }, h('label', { for: 'ot-tol' }, 'Tolerance (L1)'), tolInput),
    ),
  );

  container.append(
    h(
      'header',
      { class: 'panel-header' },
      h('h2', {}, 'Optimal transport'),
      h(
        'p',
        {},
        'Entropic optimal transport between two weighted point clouds: the plan P minimises ⟨P, C⟩ − ε·H(P) ',
        'subject to P1 = a and Pᵀ1 = b, with C the squared Euclidean distance. It is solved by log-domain Sinkhorn ',
        'in the inductive WebAssembly core, inside a Web Worker.',
      ),
    ),
    results.errorBox,
    h(
      'div',
      { class: 'ot-layout' },
      h('div', { class: 'column' }, controls, results.element),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'ot-scene-title' },
        h('h3', { id: 'ot-scene-title' }, 'Points and transport'),
        scene.element,
        h(
          'p',
          { class: 'hint' },
          h('span', { class: 'swatch swatch-source', 'aria-hidden': 'true' }),
          'source a: click to add',
          h('span', { class: 'swatch swatch-target', 'aria-hidden': 'true' }),
          'target b: Shift+click',
          h('span', { class: 'swatch swatch-line', 'aria-hidden': 'true' }),
          'opacity ∝ P',
          h('sub', {}, 'ij'),
        ),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'ot-heatmap-title' },
        h('h3', { id: 'ot-heatmap-title' }, 'Transport plan P'),
        heatmap.element,
      ),
    ),
  );

  const runner = new LatestOnly<OtJob, OtResponse>((job) => ctx.solver.solve(job.request), {
    onBusy: () => results.setBusy(),
    onSettled: (outcome, latest) => {
      const { request, source, target, eps } = outcome.request;
      if (outcome.ok) {
        const res = outcome.response;
        const check = checkMarginals(res.plan, res.n, res.p, request.a, request.b);
        results.showResult(res, check, request, latest);
        scene.setPlan({ source, target, plan: res.plan });
        heatmap.draw({
          plan: res.plan,
          n: res.n,
          p: res.p,
          rowSums: check.rowSums,
          colSums: check.colSums,
          a: request.a,
          b: request.b,
        });
      } else if (latest) {
        // A failure for an input the user has already moved past is not worth showing; the newest one is.
        results.showError(outcome.error, eps);
        scene.setPlan(null);
        heatmap.clear();
      }
    },
  });

  const currentEps = (): number => epsFromStep(Number(epsInput.value));

  function solve(): void {
    const eps = currentEps();
    epsOutput.textContent = formatEps(eps);
    epsInput.setAttribute('aria-valuetext', `ε = ${formatEps(eps)}`);
    nCount.textContent = String(clouds.source.length);
    pCount.textContent = String(clouds.target.length);
    scene.setClouds(clouds.source, clouds.target);
    const source = clouds.source.slice();
    const target = clouds.target.slice();
    runner.submit({
      source,
      target,
      eps,
      request: {
        method: 'ot',
        sourceXy: packXy(source),
        targetXy: packXy(target),
        a: normalisedWeights(source),
        b: normalisedWeights(target),
        // Passed through as typed, even when empty or out of range: the library validates and the page shows
        // its error, rather than the page silently substituting a value.
        eps,
        maxIter: maxIterInput.valueAsNumber,
        tol: tolInput.valueAsNumber,
      },
    });
  }

  const regenerate = (): void => {
    clouds = randomClouds(Math.max(0, Math.floor(seedInput.valueAsNumber) || 0));
    solve();
  };

  epsInput.addEventListener('input', solve);
  // 'change', not 'input': half-typed numbers ("1e-") would otherwise flash errors on every keystroke.
  maxIterInput.addEventListener('change', solve);
  tolInput.addEventListener('change', solve);
  seedInput.addEventListener('change', regenerate);
  randomButton.addEventListener('click', () => {
    seedInput.value = String((Math.floor(seedInput.valueAsNumber) || 0) + 1);
    regenerate();
  });
  clearButton.addEventListener('click', () => {
    clouds = { source: [], target: [] };
    solve();
  });

  solve();
}
