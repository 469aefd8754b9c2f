// The dataset-compression figure of the "Screening" panel (thesis ch. 4, "Dataset compression"): test accuracy
// against the fraction of training samples kept, for the three orders of removal (screening score, margin,
// random), with the certified line: to its left only samples the static test proved removable are gone, so the
// model is the full data's. Marks itself data-drawn, data-curves and data-points for the e2e test.

import { svg } from '../dom';
import type { CompressionCurveSeries } from '../protocol';
import { axes, frame, IH, IW, M, message, ticks } from './charts';

const CLASSES: Record<string, string> = {
  screening: 'compression-screening',
  margin: 'compression-margin',
  random: 'compression-random',
};

export class CompressionChart {
  readonly element = frame('screening-compression-chart', 'test accuracy against the fraction of samples kept');

  draw(curves: CompressionCurveSeries[], certifiedKept: number): void {
    const root = this.element;
    const all = curves.flatMap((c) => c.accuracy);
    if (curves.length === 0 || all.length === 0) {
      message(root, 'no curve');
      return;
    }
    const kept = curves.flatMap((c) => c.kept);
    const kHi = 1;
    const kLo = Math.min(...kept);
    const sx = (k: number): number => M.left + (IW * (kHi - k)) / Math.max(1e-9, kHi - kLo);
    const aHi = Math.min(1, Math.max(...all) + 0.01);
    const aLo = Math.max(0, Math.min(...all) - 0.01);
    const sy = (a: number): number => M.top + IH * (1 - (a - aLo) / Math.max(1e-9, aHi - aLo));
    const children: SVGElement[] = [
      axes(
        ticks(kLo, kHi, 5),
        sx,
        ticks(aLo, aHi, 4),
        sy,
        'fraction of training samples kept',
        'test accuracy',
        (v) => `${Number((100 * v).toPrecision(3))}%`,
      ),
    ];
    if (certifiedKept < 1) {
      const x = sx(Math.max(certifiedKept, kLo));
      children.push(
        svg('line', { x1: x, x2: x, y1: M.top, y2: M.top + IH, class: 'compression-certified' }),
        svg('text', { x: x + 4, y: M.top + 12, class: 'gap-tick' }, 'certified'),
      );
    }
    let points = 0;
    for (const c of curves) {
      const cls = CLASSES[c.ranking] ?? 'compression-random';
      children.push(
        svg('polyline', {
          class: cls,
          points: c.kept.map((k, i) => `${sx(k)},${sy(c.accuracy[i]!)}`).join(' '),
        }),
      );
      const dots = svg('g', { class: `${cls} compression-dots`, 'data-ranking': c.ranking });
      c.kept.forEach((k, i) => {
        const gap = c.gap[i];
        dots.append(
          svg(
            'circle',
            { cx: sx(k), cy: sy(c.accuracy[i]!), r: 2.6 },
            svg(
              'title',
              {},
              `${c.ranking}: ${(100 * k).toFixed(0)}% kept, test accuracy ${(100 * c.accuracy[i]!).toFixed(2)}%, ` +
                `certified gap ${gap === null || gap === undefined ? '—' : gap.toExponential(1)}`,
            ),
          ),
        );
        points += 1;
      });
      children.push(dots);
    }
    const legend = svg('g', { class: 'legend' });
    curves.forEach((c, i) => {
      const y = M.top + IH - 8 - 14 * (curves.length - 1 - i);
      const x = M.left + 10;
      legend.append(
        svg('line', { x1: x, x2: x + 16, y1: y - 4, y2: y - 4, class: CLASSES[c.ranking] ?? '' }),
        svg('text', { x: x + 20, y }, c.ranking),
      );
    });
    children.push(legend);
    root.replaceChildren(...children);
    root.dataset.drawn = 'true';
    root.dataset.curves = String(curves.length);
    root.dataset.points = String(points);
  }

  clear(text: string): void {
    message(this.element, text);
  }
}
