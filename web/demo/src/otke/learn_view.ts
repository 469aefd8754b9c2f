// Learning a whole OTKE model in the page: the user's sequences (FASTA; `label=<class>` in a header labels that
// sequence) go to the worker, which runs the unsupervised stage on all of them (Nyström anchors and references,
// as `inductive otke fit` does natively) and fits a head on the labelled few. Long on real data: it shows the
// library's progress and can be cancelled, which leaves the current model as it was.

import { h } from '../dom';
import type { OtkeLearnRequest, OtkeLearnResponse } from '../protocol';
import { PROMOTER_RECORDS, NON_PROMOTER_RECORDS } from './examples';

export interface LearnListener {
  learn(request: OtkeLearnRequest, onProgress: (stage: string, fraction: number) => void): void;
  cancel(): void;
  reset(): void;
  save(): void;
}

/** The vendored promoters and non-promoters, `labelled` of each class labelled, the rest unlabelled. */
export function bundledFasta(labelled: number): string {
  const records = (list: { name: string; sequence: string }[], cls: string) =>
    list.map((r, i) => `>${r.name}${i < labelled ? ` label=${cls}` : ''}\n${r.sequence}`);
  return [...records(PROMOTER_RECORDS, 'promoter'), ...records(NON_PROMOTER_RECORDS, 'non_promoter')].join('\n');
}

function numberInput(id: string, value: number, min: number, max: number): HTMLInputElement {
  return h('input', { type: 'number', id, 'data-testid': id, value, min, max, step: 1, class: 'otke-learn-number' });
}

export class LearnView {
  readonly element: HTMLElement;
  private readonly data = h('textarea', {
    id: 'otke-learn-data',
    'data-testid': 'otke-learn-data',
    rows: 6,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: '>seq1 label=promoter\nTTGACA…\n>seq2\nACGT…',
  });
  private readonly file = h('input', {
    type: 'file',
    id: 'otke-learn-file',
    'data-testid': 'otke-learn-file',
    accept: '.fa,.fasta,.fna,.txt',
  });
  private readonly k = numberInput('otke-learn-k', 8, 1, 32);
  private readonly anchors = numberInput('otke-learn-anchors', 32, 1, 1024);
  private readonly p = numberInput('otke-learn-p', 16, 1, 256);
  private readonly seed = numberInput('otke-learn-seed', 0, 0, 2 ** 31 - 1);
  private readonly learnButton = h('button', { type: 'button', 'data-testid': 'otke-learn' }, 'Learn');
  private readonly cancelButton = h(
    'button',
    { type: 'button', class: 'secondary', 'data-testid': 'otke-learn-cancel', disabled: true },
    'Cancel',
  );
  private readonly resetButton = h(
    'button',
    { type: 'button', class: 'secondary', 'data-testid': 'otke-learn-reset', disabled: true },
    'Use the file’s model',
  );
  private readonly saveButton = h(
    'button',
    { type: 'button', class: 'secondary', 'data-testid': 'otke-learn-save', disabled: true },
    'Save model',
  );
  private readonly progress = h('progress', { 'data-testid': 'otke-learn-progress', max: 1, value: 0, hidden: true });
  private readonly status = h(
    'p',
    {
      class: 'status',
      'data-testid': 'otke-learn-status',
      'data-state': 'idle',
      role: 'status',
      'aria-live': 'polite',
    },
    'Paste sequences (or use the bundled ones), label a few, then learn.',
  );

  constructor(private readonly listener: LearnListener) {
    const fill = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'otke-learn-examples' },
      'Use the 300 bundled E. coli sequences, 6 labelled per class',
    );
    fill.addEventListener('click', () => {
      this.data.value = bundledFasta(6);
    });
    this.element = h(
      'section',
      { class: 'card otke-learn', 'aria-labelledby': 'otke-learn-title' },
      h('h3', { id: 'otke-learn-title' }, 'Learn a model from your sequences'),
      h(
        'p',
        { class: 'hint' },
        'The whole model is learnt here, in the worker: Nyström anchors by spherical k-means on k-mers of all the ',
        'sequences, the reference by k-means on their embeddings (no labels needed), then a head from the ',
        'labelled few (“label=class” in a FASTA header). The model file it saves is the one ',
        'inductive otke fit writes: the native CLI reads it.',
      ),
      h('div', { class: 'row' }, fill),
      this.data,
      h('div', { class: 'row' }, h('label', { for: 'otke-learn-file' }, 'or a FASTA file'), this.file),
      h(
        'div',
        { class: 'row otke-learn-settings' },
        h('label', { for: 'otke-learn-k' }, 'k'),
        this.k,
        h('label', { for: 'otke-learn-anchors' }, 'anchors'),
        this.anchors,
        h('label', { for: 'otke-learn-p' }, 'supports p'),
        this.p,
        h('label', { for: 'otke-learn-seed' }, 'seed'),
        this.seed,
      ),
      h('div', { class: 'row otke-actions' }, this.learnButton, this.cancelButton, this.resetButton, this.saveButton),
      this.progress,
      this.status,
    );
    this.learnButton.addEventListener('click', () => this.start());
    this.cancelButton.addEventListener('click', () => listener.cancel());
    this.resetButton.addEventListener('click', () => listener.reset());
    this.saveButton.addEventListener('click', () => listener.save());
  }

  showLearnt(res: OtkeLearnResponse): void {
    this.stop(
      'done',
      `Learnt from ${res.sequences} sequences (${res.labelled} labelled) in ` +
        `${((res.fitMs + res.headMs) / 1000).toFixed(1)} s: k = ${res.k}, K = ${res.anchors} anchors, p = ${res.p} ` +
        `supports, Φ of ${res.outputDim} dimensions; head λ = ${res.lambda} (${res.lambdaChoice}), training accuracy ` +
        `${(100 * res.trainAccuracy).toFixed(0)}%. The analysis above now uses this model.`,
    );
    this.resetButton.disabled = false;
    this.saveButton.disabled = false;
  }

  showCancelled(restarted: boolean): void {
    this.stop(
      'cancelled',
      restarted
        ? 'Cancelled: the worker was restarted (this page is not cross-origin isolated), so the file’s model is back.'
        : 'Cancelled: the model in use is unchanged.',
    );
  }

  showError(code: string, message: string): void {
    this.stop('error', `Failed (${code}): ${message}`);
  }

  showReset(): void {
    this.stop('done', 'Back to the model file.');
    this.resetButton.disabled = true;
    this.saveButton.disabled = true;
  }

  private start(): void {
    // A chosen file wins over the text box; either is parsed in the worker.
    const file = this.file.files?.[0] ?? null;
    this.status.dataset.state = 'busy';
    this.status.textContent = file
      ? `Reading ${file.name} (${(file.size / 2 ** 20).toFixed(1)} MB)…`
      : 'Reading the sequences…';
    this.learnButton.disabled = true;
    this.cancelButton.disabled = false;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.listener.learn(
      {
        method: 'otke-learn',
        fasta: file ?? this.data.value,
        k: this.k.valueAsNumber,
        anchors: this.anchors.valueAsNumber,
        p: this.p.valueAsNumber,
        seed: this.seed.valueAsNumber,
      },
      (stage, fraction) => {
        this.progress.value = fraction;
        this.progress.dataset.stage = stage;
        this.status.textContent = `Learning: ${stage} ${(100 * fraction).toFixed(0)}%`;
      },
    );
  }

  private stop(state: string, text: string): void {
    this.status.dataset.state = state;
    this.status.textContent = text;
    this.learnButton.disabled = false;
    this.cancelButton.disabled = true;
    this.progress.hidden = true;
  }
}
