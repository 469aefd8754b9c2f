// The regularisation-path card of the "Screening" panel: 20 lambdas from 1 down to 0.001 (the thesis' range,
// relative to the largest), each solved from the previous solution, once with safe screening and once without;
// the chart shows the fraction screened and the time per lambda of both, the summary the total speed-up. Long on
// large files: it shows progress and can be cancelled.

import { h } from '../dom';
import type { ScreeningPathResponse } from '../protocol';
import { PathChart } from './path_chart';

export interface PathListener {
  /** Runs the path with the panel's current settings. */
  run(onProgress: (stage: string, fraction: number) => void, signal: AbortSignal): Promise<ScreeningPathResponse>;
}

export class PathView {
  readonly element: HTMLElement;
  private readonly chart = new PathChart();
  private readonly runButton = h('button', { type: 'button', 'data-testid': 'screening-path-run' }, 'Run the path');
  private readonly cancelButton = h(
    'button',
    { type: 'button', class: 'secondary', 'data-testid': 'screening-path-cancel', disabled: true },
    'Cancel',
  );
  private readonly progress = h('progress', {
    'data-testid': 'screening-path-progress',
    max: 1,
    value: 0,
    hidden: true,
  });
  private readonly summary = h(
    'p',
    {
      class: 'status',
      'data-testid': 'screening-path-summary',
      'data-state': 'idle',
      role: 'status',
      'aria-live': 'polite',
    },
    'Runs 20 values of λ from 1 down to 0.001, each from the previous solution, with and without screening.',
  );
  private controller: AbortController | null = null;

  constructor(private readonly listener: PathListener) {
    this.chart.clear('run the path to see it');
    this.element = h(
      'section',
      { class: 'card', 'aria-labelledby': 'screening-path-title' },
      h('h3', { id: 'screening-path-title' }, 'Regularisation path: what screening saves'),
      h(
        'p',
        { class: 'hint' },
        'The same problem (loss, penalty, μ, classes as set above) for 20 values of λ, each solve warm-started from ',
        'the previous one, once with sequential and dynamic safe screening and once without, in the worker ',
        '(ScreeningDataset.path). Orange: time per λ with screening, grey: without; blue: fraction screened.',
      ),
      h('div', { class: 'row' }, this.runButton, this.cancelButton),
      this.progress,
      this.chart.element,
      this.summary,
    );
    this.runButton.addEventListener('click', () => this.run());
    this.cancelButton.addEventListener('click', () => this.controller?.abort());
  }

  private run(): void {
    this.controller = new AbortController();
    this.runButton.disabled = true;
    this.cancelButton.disabled = false;
    this.progress.hidden = false;
    this.progress.value = 0;
    this.summary.dataset.state = 'busy';
    this.summary.textContent = 'Running the path…';
    this.listener
      .run((stage, fraction) => {
        this.progress.value = fraction;
        this.progress.dataset.stage = stage;
        this.summary.textContent = `Running the path: ${stage}, ${(100 * fraction).toFixed(0)}%`;
      }, this.controller.signal)
      .then(
        (res) => {
          const withS = res.secondsWith.reduce((a, b) => a + b, 0);
          const without = res.secondsWithout.reduce((a, b) => a + b, 0);
          this.chart.draw({
            lambdas: res.lambdas,
            fraction: res.fraction,
            withScreening: res.secondsWith,
            without: res.secondsWithout,
          });
          const speedup = without / Math.max(withS, 1e-9);
          this.summary.dataset.speedup = String(speedup);
          this.finish(
            'done',
            `${res.dataset.name}, ${res.lambdas.length} values of λ: ${(1000 * withS).toFixed(1)} ms with ` +
              `screening, ${(1000 * without).toFixed(1)} ms without (${speedup.toFixed(2)}×); ${(100 * res.fraction.at(-1)!).toFixed(1)}% ` +
              `screened at the smallest λ${res.converged ? '' : '; some solves stopped at the epoch cap'}.`,
          );
        },
        (err: { code?: string; message?: string }) => {
          if (err.code === 'cancelled') this.finish('cancelled', 'Cancelled: the path was stopped.');
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
