// The few-labels use case: a short list of example sequences, each with one toggle button per class; "Fit head"
// sends the labelled ones to the worker, which fits a new linear head on their OTKE embeddings (the anchors and
// references stay those of the model file). "Save model" downloads the model with that head.

import { h } from '../dom';
import { formatMs } from '../format';
import type { OtkeFitHeadResponse } from '../protocol';
import type { Example } from './examples';

export interface LabelsListener {
  fit(sequences: string[], names: string[], labels: string[]): void;
  reset(): void;
  save(): void;
  show(example: Example): void;
}

export class LabelsView {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private readonly fitButton: HTMLButtonElement;
  private readonly resetButton: HTMLButtonElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly status: HTMLElement;
  private readonly chosen = new Map<number, string>();
  private seq = 0;

  constructor(
    private readonly examples: Example[],
    private readonly listener: LabelsListener,
  ) {
    this.list = h('ol', { class: 'otke-label-list', 'data-testid': 'otke-label-list' });
    this.fitButton = h('button', { type: 'button', 'data-testid': 'otke-fit-head', disabled: true }, 'Fit head');
    this.resetButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'otke-reset-head', disabled: true },
      'Use the file’s head',
    );
    this.saveButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'otke-save', disabled: true },
      'Save model',
    );
    this.status = h(
      'p',
      {
        class: 'status',
        'data-testid': 'otke-fit-status',
        'data-state': 'idle',
        'data-seq': 0,
        role: 'status',
        'aria-live': 'polite',
      },
      'Label a few sequences of each class, then fit.',
    );
    this.element = h(
      'section',
      { class: 'card otke-labels', 'aria-labelledby': 'otke-labels-title' },
      h('h3', { id: 'otke-labels-title' }, 'Few labels: fit a new head'),
      h(
        'p',
        { class: 'hint' },
        'Label a few of these sequences and fit a new logistic-regression head on their OTKE embeddings, in the ',
        'worker: the anchors and the reference stay those of the file, only the head changes. The L2 penalty λ ',
        'is chosen by cross-validation once every class has 10 labels, and is a fixed default (2⁻⁴) before that. ',
        'Click a name to analyse that sequence above.',
      ),
      this.list,
      h('div', { class: 'row otke-actions' }, this.fitButton, this.resetButton, this.saveButton),
      this.status,
    );
    this.fitButton.addEventListener('click', () => this.fit());
    this.resetButton.addEventListener('click', () => listener.reset());
    this.saveButton.addEventListener('click', () => listener.save());
  }

  /** Builds the list once the model's class names are known. */
  setClasses(classes: string[]): void {
    this.list.replaceChildren(
      ...this.examples.map((ex, i) => {
        const show = h(
          'button',
          { type: 'button', class: 'link', 'data-testid': `otke-show-${i}`, title: ex.sequence },
          ex.name,
        );
        show.addEventListener('click', () => this.listener.show(ex));
        const buttons = classes.map((cls, c) => {
          const b = h(
            'button',
            {
              type: 'button',
              class: 'chip',
              'aria-pressed': 'false',
              'data-testid': `otke-label-${i}-${c}`,
              'aria-label': `Label ${ex.name} as ${cls}`,
            },
            cls,
          );
          b.addEventListener('click', () => {
            if (this.chosen.get(i) === cls) this.chosen.delete(i);
            else this.chosen.set(i, cls);
            buttons.forEach((other, k) =>
              other.setAttribute('aria-pressed', String(this.chosen.get(i) === classes[k])),
            );
            this.fitButton.disabled = this.chosen.size === 0;
          });
          return b;
        });
        return h(
          'li',
          {},
          show,
          h('code', { class: 'otke-snippet', 'aria-hidden': 'true' }, `${ex.sequence.slice(0, 10)}…`),
          h('span', { class: 'chips', role: 'group', 'aria-label': `Class of ${ex.name}` }, ...buttons),
        );
      }),
    );
    this.saveButton.disabled = false;
  }

  setBusy(text: string): void {
    this.status.dataset.state = 'computing';
    this.status.textContent = text;
  }

  showFit(res: OtkeFitHeadResponse): void {
    const counts = res.labels.map((l, c) => `${res.classCounts[c]} ${l}`).join(' + ');
    const how =
      res.lambdaChoice === 'cross-validation'
        ? `chosen by ${res.folds}-fold cross-validation (held-out accuracy ${(100 * (res.cvAccuracy ?? 0)).toFixed(0)}%)`
        : res.lambdaChoice === 'default'
          ? 'the default below 10 labels per class'
          : 'given';
    this.settle(
      'done',
      `Fitted on ${counts} in ${formatMs(res.computeMs)} ms: training accuracy ` +
        `${(100 * res.trainAccuracy).toFixed(0)}%, λ = ${res.lambda} (${how}).`,
    );
    this.resetButton.disabled = false;
  }

  showReset(): void {
    this.settle('done', 'Back to the head of the model file.');
    this.resetButton.disabled = true;
  }

  showError(code: string): void {
    this.settle('error', `Failed: ${code} (see the message above).`);
  }

  /** Short description of the fitted head for the prediction card. */
  static describe(res: OtkeFitHeadResponse): string {
    return `fitted here on ${res.classCounts.reduce((a, b) => a + b, 0)} labelled sequences (λ = ${res.lambda})`;
  }

  private fit(): void {
    const picked = [...this.chosen.entries()].sort(([a], [b]) => a - b);
    this.listener.fit(
      picked.map(([i]) => this.examples[i].sequence),
      picked.map(([i]) => this.examples[i].name),
      picked.map(([, cls]) => cls),
    );
  }

  private settle(state: string, text: string): void {
    this.seq += 1;
    this.status.dataset.seq = String(this.seq);
    this.status.dataset.state = state;
    this.status.textContent = text;
  }
}
