// Class probabilities of the current head as bars (and, once a head was fitted here, the committed head's next to
// them), the status line and the panel's error box. Values carry stable data-testids for the e2e test.

import { h } from '../dom';
import { formatMs } from '../format';
import type { OtkeAnalyseResponse } from '../protocol';
import type { SolverError } from '../solver_client';

export type Status = 'loading' | 'computing' | 'done' | 'error';

const percent = (x: number): string => `${(100 * x).toFixed(1)}%`;

export class PredictionView {
  readonly element: HTMLElement;
  readonly errorBox: HTMLElement;
  private readonly status: HTMLElement;
  private readonly bars: HTMLElement;
  private readonly predicted: HTMLElement;
  private readonly headNote: HTMLElement;
  private readonly details: HTMLElement;
  private readonly errorCode: HTMLElement;
  private readonly errorMessage: HTMLElement;
  private seq = 0;

  constructor() {
    this.status = h(
      'p',
      {
        id: 'otke-status',
        class: 'status',
        'data-testid': 'otke-status',
        'data-state': 'loading',
        'data-seq': 0,
        role: 'status',
        'aria-live': 'polite',
      },
      'Loading the model…',
    );
    this.predicted = h('strong', { 'data-testid': 'otke-predicted-label' }, '—');
    this.bars = h('div', { class: 'otke-bars', 'data-testid': 'otke-probabilities' });
    this.headNote = h('p', { class: 'hint', 'data-testid': 'otke-head-note' }, '');
    this.details = h('p', { class: 'hint', 'data-testid': 'otke-details' }, '');
    this.element = h(
      'section',
      { class: 'card', 'aria-labelledby': 'otke-prediction-title' },
      h('h3', { id: 'otke-prediction-title' }, 'Prediction'),
      h('p', { class: 'otke-predicted' }, 'Predicted class: ', this.predicted),
      this.bars,
      this.headNote,
      this.details,
      this.status,
    );

    this.errorCode = h('code', { id: 'otke-error-code', 'data-testid': 'otke-error-code' });
    this.errorMessage = h('span', { id: 'otke-error-message', 'data-testid': 'otke-error-message' });
    this.errorBox = h(
      'div',
      { id: 'otke-error', class: 'error-box', 'data-testid': 'otke-error', role: 'alert', hidden: true },
      h('strong', {}, 'The computation failed '),
      this.errorCode,
      h('p', {}, this.errorMessage),
    );
  }

  setBusy(text = 'Computing…'): void {
    this.setStatus('computing', text);
  }

  /** `fitted`: a short description of the page's head, or null for the committed one. */
  showResult(res: OtkeAnalyseResponse, name: string, fitted: string | null, final: boolean): void {
    let best = 0;
    res.probabilities.forEach((v, c) => {
      if (v > res.probabilities[best]) best = c;
    });
    this.predicted.textContent = res.labels[best] ?? '—';
    this.bars.replaceChildren(
      ...res.labels.map((label, c) => {
        const value = res.probabilities[c];
        const fill = h('span', { class: 'otke-bar-fill' });
        fill.style.width = percent(value);
        const original = res.originalProbabilities?.[c];
        const marker =
          original === undefined
            ? null
            : h('span', { class: 'otke-bar-marker', title: `committed head: ${percent(original)}` });
        if (marker) marker.style.left = percent(original!);
        return h(
          'div',
          { class: `otke-bar${c === best ? ' best' : ''}` },
          h('span', { class: 'otke-bar-label' }, label),
          h('span', { class: 'otke-bar-track' }, fill, marker),
          h('output', { 'data-testid': `otke-prob-${c}`, 'data-value': String(value) }, percent(value)),
        );
      }),
    );
    this.headNote.textContent =
      fitted === null
        ? 'Head: the one in the model file.'
        : `Head: ${fitted}. Ticks mark the model file's head: ${res.labels.map((l, c) => `${l} ${percent(res.originalProbabilities?.[c] ?? NaN)}`).join(', ')}.`;
    this.details.textContent =
      `${res.length} letters, ${res.n} k-mers of length ${res.k}; ` + `${formatMs(res.computeMs)} ms in the worker.`;
    if (!final) return;
    this.errorBox.hidden = true;
    this.settle('done', `Analysed “${name}”.`);
  }

  showError(err: SolverError): void {
    this.errorCode.textContent = err.code;
    this.errorMessage.textContent = err.message;
    this.errorBox.hidden = false;
    this.predicted.textContent = '—';
    this.bars.replaceChildren();
    this.details.textContent = '';
    this.settle('error', `Failed: ${err.code}.`);
  }

  /** An error of another action (fitting, saving): shown in the box, the current prediction kept. */
  showSideError(err: SolverError): void {
    this.errorCode.textContent = err.code;
    this.errorMessage.textContent = err.message;
    this.errorBox.hidden = false;
  }

  private settle(state: Status, text: string): void {
    this.seq += 1;
    this.status.dataset.seq = String(this.seq);
    this.setStatus(state, text);
  }

  private setStatus(state: Status, text: string): void {
    this.status.dataset.state = state;
    this.status.textContent = text;
  }
}
