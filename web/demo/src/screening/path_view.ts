// The regularisation-path card of the "Screening" panel: 20 lambdas from 1 down to 0.001 (the thesis' range,
// relative to the largest), each solved from the previous solution, once with safe screening and once without;
// the chart shows the fraction screened and the time per lambda of both, the summary the total speed-up. Long on
// large files: it shows progress and can be cancelled.

import { h } from '../dom';
import type { ScreeningPathResponse } from '../protocol';
import { PathChart } from './path_chart';
import { RunCard } from './run_card';

export interface PathListener {
  /** Runs the path with the panel's current settings (`workingSet`: the card's check box). */
  run(
    onProgress: (stage: string, fraction: number) => void,
    signal: AbortSignal,
    workingSet: boolean,
  ): Promise<ScreeningPathResponse>;
}

export class PathView extends RunCard<ScreeningPathResponse> {
  private readonly chart: PathChart;
  private readonly workingSet: HTMLInputElement;

  constructor(private readonly listener: PathListener) {
    const chart = new PathChart();
    const workingSet = h('input', {
      id: 'screening-path-working-set',
      'data-testid': 'screening-path-working-set',
      type: 'checkbox',
    });
    super(
      {
        id: 'screening-path',
        title: 'Regularisation path: what screening saves',
        hint: [
          'The same problem (loss, penalty, μ, classes as set above) for 20 values of λ, each solve warm-started ',
          'from the previous one, once with sequential and dynamic safe screening and once without, in the worker ',
          '(ScreeningDataset.path). Orange: time per λ with screening, grey: without; blue: fraction screened. ',
          'With the working set, each screened solve iterates over the samples not flat at its warm start and ',
          'proves the rest flat before it stops: the same solutions, sooner.',
        ],
        idle: 'Runs 20 values of λ from 1 down to 0.001, each from the previous solution, with and without screening.',
        busy: 'Running the path',
        cancelled: 'Cancelled: the path was stopped.',
      },
      'Run the path',
      h(
        'div',
        {},
        h('label', { for: 'screening-path-working-set' }, workingSet, ' sample working set (workingSet)'),
        chart.element,
      ),
    );
    this.chart = chart;
    this.workingSet = workingSet;
    this.chart.clear('run the path to see it');
  }

  protected start(
    onProgress: (stage: string, fraction: number) => void,
    signal: AbortSignal,
  ): Promise<ScreeningPathResponse> {
    return this.listener.run(onProgress, signal, this.workingSet.checked);
  }

  protected show(res: ScreeningPathResponse): string {
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
    return (
      `${res.dataset.name}, ${res.lambdas.length} values of λ: ${(1000 * withS).toFixed(1)} ms with ` +
      `screening${res.workingSet ? ' and a working set' : ''}, ${(1000 * without).toFixed(1)} ms without (${speedup.toFixed(2)}×); ${(100 * res.fraction.at(-1)!).toFixed(1)}% ` +
      `screened at the smallest λ${res.converged ? '' : '; some solves stopped at the epoch cap'}.`
    );
  }
}
