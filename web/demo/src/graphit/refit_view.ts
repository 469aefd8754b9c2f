// The few-labels card of the GraphiT panel: labelled molecules in ("smiles,label" lines, or 40 BBBP examples),
// "Refit head" asks the worker for a new output layer on them (library GraphitModel.refitHead, the encoder frozen),
// with progress and a Cancel button; the refitted model then serves the panel's analyses until "Use the file's
// head". "Save model" downloads the model in use, which the native CLI reads.

import { download, h } from '../dom';
import { formatMs, formatValue } from '../format';
import type { GraphitRefitResponse } from '../protocol';
import { toSolverError, type SolverClient, type SolverError } from '../solver_client';
import { MODEL_FILE_NAME } from './model_asset';
import { formatLabelledCsv, parseLabelledCsv, type LabelledMolecules } from './refit_csv';

export const REFIT_FILE_NAME = 'graphit-refit.safetensors';
const EXAMPLES_PER_CLASS = 20;

/** What the library's stages are, for the progress line. */
const STAGES: Record<string, string> = {
  prepare: 'parsing the molecules',
  hidden: 'hidden activations (frozen encoder)',
  'cross-validation': 'choosing λ by cross-validation',
  fit: 'fitting the output layer',
};

type State = 'idle' | 'busy' | 'done' | 'error' | 'cancelled';

export interface RefitListener {
  /** The model the worker analyses with changed (refitted, reset, or dropped by a worker restart). */
  modelChanged(): void;
}

export class RefitCard {
  readonly element: HTMLElement;
  private readonly data: HTMLTextAreaElement;
  private readonly examplesButton: HTMLButtonElement;
  private readonly refitButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly resetButton: HTMLButtonElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly progress: HTMLProgressElement;
  private readonly progressLabel: HTMLOutputElement;
  private readonly status: HTMLElement;
  /** The running refit's abort handle; null when none runs. */
  private running: AbortController | null = null;
  /** Set by a worker restart during the running refit: its cancel also dropped any earlier refit. */
  private restartedDuringRun = false;
  private refitted: GraphitRefitResponse | null = null;
  private seq = 0;

  constructor(
    private readonly solver: SolverClient,
    private readonly listener: RefitListener,
  ) {
    this.data = h('textarea', {
      id: 'graphit-refit-data',
      'data-testid': 'graphit-refit-data',
      rows: 8,
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: 'CCO,class A\nc1ccccc1N,class B',
      'aria-label': 'Labelled molecules, one "smiles,label" per line',
    });
    this.examplesButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'graphit-refit-examples' },
      `Use ${2 * EXAMPLES_PER_CLASS} BBBP molecules`,
    );
    this.refitButton = h('button', { type: 'button', 'data-testid': 'graphit-refit' }, 'Refit head');
    this.cancelButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'graphit-refit-cancel', disabled: true },
      'Cancel',
    );
    this.resetButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'graphit-refit-reset', disabled: true },
      'Use the file’s head',
    );
    this.saveButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': 'graphit-refit-save' },
      'Save model',
    );
    this.progress = h('progress', { 'data-testid': 'graphit-refit-progress', max: 1, 'aria-label': 'Refit progress' });
    this.progressLabel = h('output', { 'data-testid': 'graphit-refit-stage' });
    this.status = h(
      'p',
      {
        class: 'status',
        'data-testid': 'graphit-refit-status',
        'data-state': 'idle',
        'data-seq': 0,
        role: 'status',
        'aria-live': 'polite',
      },
      'Write labelled molecules (or use the examples), then refit.',
    );
    this.element = h(
      'section',
      {
        class: 'card graphit-refit',
        'aria-labelledby': 'graphit-refit-title',
        'data-cancel-mode': solver.cancelMode,
      },
      h('h3', { id: 'graphit-refit-title' }, 'Few labels: refit the head on your molecules'),
      h(
        'p',
        { class: 'hint' },
        'One labelled molecule per line, "smiles,label"; the classes are the distinct labels, in order of first ',
        'appearance. The encoder and its attention stay those of the model file: each molecule goes once through the ',
        'frozen network, and only the output layer is fitted, in the worker, on these hidden activations ',
        '(L2-penalised logistic regression). The penalty λ is chosen by cross-validation once every class has 10 ',
        'labels, and is 2⁻⁴ below that. The prediction above then uses the new classes.',
      ),
      this.data,
      h('div', { class: 'row graphit-refit-actions' }, this.examplesButton, this.refitButton, this.cancelButton),
      h('div', { class: 'graphit-refit-progress', hidden: true }, this.progress, this.progressLabel),
      this.status,
      h('div', { class: 'row graphit-refit-actions' }, this.resetButton, this.saveButton),
    );

    this.examplesButton.addEventListener('click', () => void this.fillExamples());
    this.refitButton.addEventListener('click', () => void this.refit());
    this.cancelButton.addEventListener('click', () => this.running?.abort());
    this.resetButton.addEventListener('click', () => void this.reset());
    this.saveButton.addEventListener('click', () => void this.save());
    // Without shared memory a cancel (this card's or another panel's) restarts the worker, which forgets the
    // refitted model: the page must follow it back to the committed one.
    solver.onRestart(() => this.workerRestarted());
  }

  private async fillExamples(): Promise<void> {
    this.examplesButton.disabled = true;
    try {
      const res = await this.solver.solve({ method: 'graphit-examples', perClass: EXAMPLES_PER_CLASS });
      this.data.value = formatLabelledCsv(res.molecules);
      this.settle(
        'idle',
        `${res.molecules.length} molecules of ${res.source} (the first ${EXAMPLES_PER_CLASS} of each ` +
          `class whose atoms the model knows; ${res.skipped} of the ${res.read} read were skipped). Refit when ready.`,
      );
    } catch (err) {
      this.showError(toSolverError(err));
    } finally {
      this.examplesButton.disabled = this.running !== null;
    }
  }

  private async refit(): Promise<void> {
    if (this.running !== null) return;
    let data: LabelledMolecules;
    try {
      data = parseLabelledCsv(this.data.value);
    } catch (err) {
      this.showError(toSolverError(err));
      return;
    }
    const run = new AbortController();
    this.running = run;
    this.restartedDuringRun = false;
    this.setRunning(true);
    this.showProgress(null, 0);
    this.settle('busy', `Refitting the output layer on ${data.smiles.length} labelled molecules…`);
    try {
      const res = await this.solver.solve(
        { method: 'graphit-refit', smiles: data.smiles, labels: data.labels },
        { signal: run.signal, onProgress: (stage, fraction) => this.showProgress(stage, fraction) },
      );
      this.refitted = res;
      this.settle('done', describeFit(res));
      this.listener.modelChanged();
    } catch (err) {
      const e = toSolverError(err);
      if (e.code !== 'cancelled') this.showError(e);
      else if (!run.signal.aborted) this.settle('cancelled', `Stopped (${e.message}).`);
      else if (this.restartedDuringRun) {
        this.settle(
          'cancelled',
          'Cancelled: the worker was restarted to stop it, so the page is back to the file’s head.',
        );
      } else {
        this.settle(
          'cancelled',
          `Cancelled: the model in use is unchanged (${
            this.refitted === null ? 'the file’s head' : 'the previous refit'
          }).`,
        );
      }
    } finally {
      this.running = null;
      this.setRunning(false);
    }
  }

  private async reset(): Promise<void> {
    try {
      await this.solver.solve({ method: 'graphit-reset' });
      this.refitted = null;
      this.resetButton.disabled = true;
      this.settle('done', 'Back to the head of the model file.');
      this.listener.modelChanged();
    } catch (err) {
      this.showError(toSolverError(err));
    }
  }

  private async save(): Promise<void> {
    try {
      const res = await this.solver.solve({ method: 'graphit-save' });
      const name = res.refitted ? REFIT_FILE_NAME : MODEL_FILE_NAME;
      download(res.bytes, name);
      this.settle(
        'done',
        `Saved ${name} (${(res.bytes.length / 1024).toFixed(0)} KB, ${res.refitted ? 'the refitted head' : 'the file’s head'}).`,
      );
    } catch (err) {
      this.showError(toSolverError(err));
    }
  }

  private workerRestarted(): void {
    if (this.running !== null) this.restartedDuringRun = true;
    const had = this.refitted !== null;
    this.refitted = null;
    this.resetButton.disabled = true;
    if (this.running === null && had) {
      this.settle('idle', 'The worker was restarted (a computation was cancelled): back to the file’s head.');
    }
    this.listener.modelChanged();
  }

  private setRunning(running: boolean): void {
    this.refitButton.disabled = running;
    this.examplesButton.disabled = running;
    this.cancelButton.disabled = !running;
    this.saveButton.disabled = running;
    this.resetButton.disabled = running || this.refitted === null;
    this.data.readOnly = running;
    // The bar belongs to the run: it disappears with it (the status line says how it ended).
    (this.progress.parentElement as HTMLElement).hidden = !running;
  }

  /** `stage` null: started, nothing reported yet (an indeterminate bar). */
  private showProgress(stage: string | null, fraction: number): void {
    if (stage === null) {
      this.progress.removeAttribute('value');
      delete this.progress.dataset.stage;
      this.progressLabel.textContent = 'starting…';
      return;
    }
    this.progress.value = fraction;
    this.progress.dataset.stage = stage;
    this.progressLabel.textContent = `${STAGES[stage] ?? stage}: ${(100 * fraction).toFixed(0)}%`;
  }

  private showError(err: SolverError): void {
    this.settle('error', '');
    this.status.append(
      'Failed: ',
      h('code', { 'data-testid': 'graphit-refit-error-code' }, err.code),
      ` — ${err.message}`,
    );
  }

  private settle(state: State, text: string): void {
    this.seq += 1;
    this.status.dataset.seq = String(this.seq);
    this.status.dataset.state = state;
    this.status.textContent = text;
  }
}

const SUPERSCRIPT: Record<string, string> = {
  '-': '⁻',
  0: '⁰',
  1: '¹',
  2: '²',
  3: '³',
  4: '⁴',
  5: '⁵',
  6: '⁶',
  7: '⁷',
  8: '⁸',
  9: '⁹',
};

/** λ as the hint writes it (2⁻⁴) when it is a power of two, as the library's grid is. */
function formatLambda(lambda: number): string {
  const k = Math.log2(lambda);
  return Number.isInteger(k) ? `2${[...String(k)].map((c) => SUPERSCRIPT[c] ?? c).join('')}` : formatValue(lambda, 3);
}

function describeFit(res: GraphitRefitResponse): string {
  const counts = res.classes.map((c, i) => `${res.classCounts[i]} ${c}`).join(' + ');
  const how =
    res.lambdaChoice === 'cross-validation'
      ? `chosen by ${res.folds}-fold cross-validation, held-out accuracy ${(100 * (res.cvAccuracy ?? 0)).toFixed(0)}%`
      : res.lambdaChoice === 'default'
        ? 'the default below 10 labels per class'
        : 'given';
  return (
    `Refitted on ${counts} in ${formatMs(res.computeMs)} ms: training accuracy ` +
    `${(100 * res.trainAccuracy).toFixed(0)}%, λ = ${formatLambda(res.lambda)} (${how}).`
  );
}
