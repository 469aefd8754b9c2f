// The dataset-compression card of the "Screening" panel (thesis ch. 4): hold out a fifth of the data, solve the
// training problem with the settings above, then remove 0, 10, ..., 90% of the training samples (easiest first by
// screening score, by margin, or at random), refit on the rest and plot the test accuracy. Up to the certified
// fraction the screening order removes only samples proved irrelevant: the model, and its accuracy, stay the same.

import type { ScreeningCompressResponse } from '../protocol';
import { CompressionChart } from './compression_chart';
import { RunCard } from './run_card';

export interface CompressionListener {
  /** Computes the curves with the panel's current settings. */
  run(onProgress: (stage: string, fraction: number) => void, signal: AbortSignal): Promise<ScreeningCompressResponse>;
}

export class CompressionView extends RunCard<ScreeningCompressResponse> {
  private readonly chart: CompressionChart;

  constructor(private readonly listener: CompressionListener) {
    const chart = new CompressionChart();
    super(
      {
        id: 'screening-compression',
        title: 'Dataset compression: which samples can go',
        hint: [
          'A fifth of the data held out for testing; the problem above solved on the rest; then 0 to 90% of the ',
          'training samples removed, easiest first by screening score (blue), by margin (orange) or at random ',
          '(grey), and the model refitted on what is left (ScreeningDataset.compressionCurve). Left of the green ',
          'line only samples certified irrelevant are gone.',
        ],
        idle: 'Refits the model on 10 shrinking subsets for each of the three orders of removal.',
        busy: 'Computing the curves',
        cancelled: 'Cancelled: the curves were stopped.',
      },
      'Compute the curves',
      chart.element,
    );
    this.chart = chart;
    this.chart.clear('compute the curves to see them');
  }

  protected start(
    onProgress: (stage: string, fraction: number) => void,
    signal: AbortSignal,
  ): Promise<ScreeningCompressResponse> {
    return this.listener.run(onProgress, signal);
  }

  protected show(res: ScreeningCompressResponse): string {
    const certifiedKept = 1 - res.nCertified / res.nTrain;
    this.chart.draw(res.curves, certifiedKept);
    this.summary.dataset.certified = String(res.nCertified);
    const at = (ranking: string): string => {
      const c = res.curves.find((x) => x.ranking === ranking);
      return c ? `${(100 * c.accuracy.at(-1)!).toFixed(1)}%` : '—';
    };
    const smallest = res.curves[0]?.kept.at(-1) ?? 1;
    return (
      `${res.dataset.name}: ${res.nTrain} training and ${res.nTest} test samples; full model ` +
      `${(100 * res.fullTestAccuracy).toFixed(1)}% on the test set; ${res.nCertified} samples ` +
      `(${((100 * res.nCertified) / res.nTrain).toFixed(1)}%) certified removable. Keeping ` +
      `${(100 * smallest).toFixed(0)}%: ${at('screening')} by screening score, ${at('margin')} by margin, ` +
      `${at('random')} at random (${res.seconds.toFixed(2)} s).`
    );
  }
}
