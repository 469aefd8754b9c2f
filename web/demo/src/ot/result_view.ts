// The numbers of the latest solve, the status line and the error box. Every value sits in an element with a stable
// id and data-testid (ot-iterations, ot-row-dev, ...) so tests read exactly what a user sees.

import { h } from '../dom';
import { formatMs, formatSmall, formatValue } from '../format';
import type { OtRequest, OtResponse } from '../protocol';
import type { SolverError } from '../solver_client';
import type { MarginalCheck } from './marginals';

type StatKey =
  | 'size'
  | 'iterations'
  | 'converged'
  | 'marginal-error'
  | 'row-dev'
  | 'col-dev'
  | 'mass'
  | 'cost'
  | 'reg-cost'
  | 'time-ms';

const STATS: ReadonlyArray<[StatKey, string, string]> = [
  ['size', 'Plan size n × p', 'Number of source × target points'],
  ['iterations', 'Iterations', 'Sinkhorn iterations run'],
  ['converged', 'Converged', 'Whether the marginal error reached the tolerance within the iteration limit'],
  ['marginal-error', 'Marginal error (solver)', 'L1 marginal error ‖P1 − a‖₁ + ‖Pᵀ1 − b‖₁ reported by the library'],
  ['row-dev', 'max |P1 − a|', 'Largest deviation of a row sum of the plan from its source weight, checked in the page'],
  [
    'col-dev',
    'max |Pᵀ1 − b|',
    'Largest deviation of a column sum of the plan from its target weight, checked in the page',
  ],
  ['mass', 'Total mass ΣP', 'Sum of all plan entries (1 for a valid plan)'],
  ['cost', 'Transport cost ⟨P, C⟩', 'Cost of the plan under squared Euclidean distance'],
  ['reg-cost', 'Regularised ⟨P, C⟩ − εH(P)', 'The entropic objective at the solution, as reported by the library'],
  ['time-ms', 'Solve time (ms)', 'Wall time of the sinkhorn() call in the worker'],
];

export type Status = 'loading' | 'computing' | 'done' | 'error';

export class ResultView {
  readonly element: HTMLElement;
  /** Shown separately, above the plots, where an error cannot be missed. */
  readonly errorBox: HTMLElement;
  private readonly values = new Map<StatKey, HTMLElement>();
  private readonly status: HTMLElement;
  private readonly errorCode: HTMLElement;
  private readonly errorMessage: HTMLElement;
  /** Settled solves so far; tests wait for it to grow after changing an input. */
  private seq = 0;

  constructor() {
    this.status = h(
      'p',
      {
        id: 'ot-status',
        class: 'status',
        'data-testid': 'ot-status',
        'data-state': 'loading',
        'data-seq': 0,
        role: 'status',
        'aria-live': 'polite',
      },
      'Loading the WebAssembly core…',
    );
    const list = h('dl', { class: 'stats' });
    for (const [key, label, help] of STATS) {
      const value = h('dd', { id: `ot-${key}`, 'data-testid': `ot-${key}` }, '—');
      this.values.set(key, value);
      list.append(h('div', { class: 'stat', title: help }, h('dt', {}, label), value));
    }
    this.element = h(
      'section',
      { class: 'card results', 'aria-labelledby': 'ot-results-title' },
      h('h3', { id: 'ot-results-title' }, 'Result'),
      this.status,
      list,
    );

    this.errorCode = h('code', { id: 'ot-error-code', 'data-testid': 'ot-error-code' });
    this.errorMessage = h('span', { id: 'ot-error-message', 'data-testid': 'ot-error-message' });
    this.errorBox = h(
      'div',
      { id: 'ot-error', class: 'error-box', 'data-testid': 'ot-error', role: 'alert', hidden: true },
      h('strong', {}, 'The computation failed '),
      this.errorCode,
      h('p', {}, this.errorMessage),
    );
  }

  setBusy(): void {
    this.setStatus('computing', 'Computing…');
  }

  /** `final`: no newer input is waiting, so this is what the page settles on. */
  showResult(res: OtResponse, check: MarginalCheck, request: OtRequest, final: boolean): void {
    this.set('size', `${res.n} × ${res.p}`);
    this.set('iterations', String(res.nIter));
    this.set('converged', res.converged ? 'yes' : 'no');
    this.set('marginal-error', formatSmall(res.marginalError));
    this.set('row-dev', formatSmall(check.rowDeviation));
    this.set('col-dev', formatSmall(check.colDeviation));
    this.set('mass', formatValue(check.mass, 7));
    this.set('cost', formatValue(res.transportCost, 6));
    this.set('reg-cost', formatValue(res.regularisedCost, 6));
    this.set('time-ms', formatMs(res.computeMs));
    this.values.get('converged')!.dataset.converged = String(res.converged);
    if (!final) return;
    this.errorBox.hidden = true;
    // Say why it did not converge: the iteration limit, or a final error just above tol after an early stop.
    const note = res.converged
      ? ''
      : res.nIter >= request.maxIter
        ? `; the limit of ${request.maxIter} iterations was reached first`
        : `; its marginal error ${formatSmall(res.marginalError)} ended above the tolerance ${request.tol}`;
    this.settle(
      'done',
      `Solved ${res.n} × ${res.p} with ε = ${request.eps} in ${res.nIter} iterations${note}.`,
      request.eps,
    );
  }

  showError(err: SolverError, eps: number): void {
    for (const value of this.values.values()) value.textContent = '—';
    this.errorCode.textContent = err.code;
    this.errorMessage.textContent = err.message;
    this.errorBox.hidden = false;
    this.settle('error', `Failed: ${err.code}.`, eps);
  }

  private set(key: StatKey, text: string): void {
    this.values.get(key)!.textContent = text;
  }

  private settle(state: Status, text: string, eps: number): void {
    this.seq += 1;
    this.status.dataset.seq = String(this.seq);
    this.status.dataset.eps = String(eps);
    this.setStatus(state, text);
  }

  private setStatus(state: Status, text: string): void {
    this.status.dataset.state = state;
    this.status.textContent = text;
  }
}
