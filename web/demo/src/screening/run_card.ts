// A card of the "Screening" panel that runs one long job in the worker on demand (the regularisation path, the
// compression curves): a run and a cancel button, a progress bar, a figure and a live summary line. The summary
// carries data-state (idle | busy | done | cancelled | error) for the e2e tests. Subclasses say what to run and
// how to show its result.

import { h, type Child } from '../dom';

export interface RunCardText {
  /** data-testid prefix: `${id}-run`, `${id}-cancel`, `${id}-progress`, `${id}-summary`. */
  id: string;
  title: string;
  hint: Child[];
  idle: string;
  /** "Running the path" / "Computing the curves". */
  busy: string;
  cancelled: string;
}

export abstract class RunCard<R> {
  readonly element: HTMLElement;
  protected readonly summary: HTMLElement;
  private readonly runButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly progress: HTMLProgressElement;
  private controller: AbortController | null = null;

  protected constructor(
    private readonly text: RunCardText,
    label: string,
    figure: Element,
  ) {
    const id = text.id;
    this.runButton = h('button', { type: 'button', 'data-testid': `${id}-run` }, label);
    this.cancelButton = h(
      'button',
      { type: 'button', class: 'secondary', 'data-testid': `${id}-cancel`, disabled: true },
      'Cancel',
    );
    this.progress = h('progress', { 'data-testid': `${id}-progress`, max: 1, value: 0, hidden: true });
    this.summary = h(
      'p',
      { class: 'status', 'data-testid': `${id}-summary`, 'data-state': 'idle', role: 'status', 'aria-live': 'polite' },
      text.idle,
    );
    this.element = h(
      'section',
      { class: 'card', 'aria-labelledby': `${id}-title` },
      h('h3', { id: `${id}-title` }, text.title),
      h('p', { class: 'hint' }, ...text.hint),
      h('div', { class: 'row' }, this.runButton, this.cancelButton),
      this.progress,
      figure,
      this.summary,
    );
    this.runButton.addEventListener('click', () => this.run());
    this.cancelButton.addEventListener('click', () => this.controller?.abort());
  }

  /** Starts the job in the worker. */
  protected abstract start(onProgress: (stage: string, fraction: number) => void, signal: AbortSignal): Promise<R>;
  /** Draws the result and returns the summary line. */
  protected abstract show(result: R): string;

  private run(): void {
    this.controller = new AbortController();
    this.runButton.disabled = true;
    this.cancelButton.disabled = false;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.summary.dataset.state = 'busy';
    this.summary.textContent = `${this.text.busy}…`;
    this.start((stage, fraction) => {
      this.progress.value = fraction;
      this.progress.dataset.stage = stage;
      this.summary.textContent = `${this.text.busy}: ${stage}, ${(100 * fraction).toFixed(0)}%`;
    }, this.controller.signal).then(
      (res) => this.finish('done', this.show(res)),
      (err: { code?: string; message?: string }) => {
        if (err.code === 'cancelled') this.finish('cancelled', this.text.cancelled);
        else this.finish('error', `Failed (${err.code ?? 'Error'}): ${err.message ?? String(err)}`);
      },
    );
  }

  private finish(state: string, text: string): void {
    this.summary.dataset.state = state;
    this.summary.textContent = text;
    this.runButton.disabled = false;
    this.cancelButton.disabled = true;
    this.progress.hidden = true;
    this.controller = null;
  }
}
