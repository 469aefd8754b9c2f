// The regularisation path figure of the "Screening" panel: per lambda (log scale, decreasing to the right as the
// path visits them), the fraction of samples screened (left axis) and the time with and without screening (right
// axis, log scale). Marks itself data-drawn and data-points for the e2e test, like the other charts.

import { svg } from '../dom';
import { formatValue } from '../format';
import { axes, frame, IH, IW, M, message, W } from './charts';

export interface PathSeries {
  lambdas: number[];
  fraction: number[];
  /** Seconds per lambda with and without screening. */
  withScreening: number[];
  without: number[];
}

export class PathChart {
  readonly element = frame('screening-path-chart', 'fraction screened and time per lambda along a regularisation path');

  draw(d: PathSeries): void {
    const root = this.element;
    const count = d.lambdas.length;
    if (count === 0) {
      message(root, 'no lambda');
      return;
    }
    const lMax = Math.log10(Math.max(...d.lambdas));
    const lMin = Math.log10(Math.min(...d.lambdas));
    const sx = (l: number): number => M.left + (IW * (lMax - Math.log10(l))) / Math.max(1e-12, lMax - lMin);
    const sy = (f: number): number => M.top + IH * (1 - f);
    const times = [...d.withScreening, ...d.without].filter((t) => t > 0);
    const tHi = Math.ceil(Math.log10(Math.max(...times, 1e-6)));
    const tLo = Math.min(tHi - 1, Math.floor(Math.log10(Math.min(...times, 1))));
    const st = (t: number): number => M.top + (IH * (tHi - Math.log10(Math.max(t, 10 ** tLo)))) / (tHi - tLo);
    const decades = Array.from({ length: tHi - tLo + 1 }, (_, i) => tLo + i);
    const lambdaTicks = Array.from(
      { length: Math.floor(lMax) - Math.ceil(lMin) + 1 },
      (_, i) => 10 ** (Math.floor(lMax) - i),
    );
    const children: SVGElement[] = [
      axes(
        lambdaTicks,
        sx,
        [0, 0.25, 0.5, 0.75, 1],
        sy,
        'λ (log scale)',
        'fraction screened',
        (v) => `${Math.round(v * 100)}%`,
      ),
    ];
    for (const k of decades) {
      const label = k >= 0 ? `${10 ** k} s` : k >= -3 ? `${10 ** (k + 3)} ms` : `1e${k} s`;
      children.push(svg('text', { x: M.left + IW + 6, y: st(10 ** k) + 4, class: 'gap-tick' }, label));
    }
    children.push(
      svg(
        'text',
        {
          x: W - 10,
          y: M.top + IH / 2,
          'text-anchor': 'middle',
          class: 'axis-label gap-tick',
          transform: `rotate(90 ${W - 10} ${M.top + IH / 2})`,
        },
        'time per λ',
      ),
    );
    const line = (values: number[], y: (v: number) => number, cls: string): SVGElement =>
      svg('polyline', { class: cls, points: values.map((v, i) => `${sx(d.lambdas[i])},${y(v)}`).join(' ') });
    children.push(
      line(d.without, st, 'path-time-without'),
      line(d.withScreening, st, 'path-time-with'),
      line(d.fraction, sy, 'fraction-line'),
    );
    const dots = svg('g', { class: 'fraction-dots' });
    d.lambdas.forEach((l, i) => {
      dots.append(
        svg(
          'circle',
          { cx: sx(l), cy: sy(d.fraction[i]), r: 2.6 },
          svg(
            'title',
            {},
            `λ = ${formatValue(l, 3)}: ${(100 * d.fraction[i]).toFixed(1)}% screened, ` +
              `${(1000 * d.withScreening[i]).toFixed(2)} ms with screening, ${(1000 * d.without[i]).toFixed(2)} ms without`,
          ),
        ),
      );
    });
    children.push(dots);
    root.replaceChildren(...children);
    root.dataset.drawn = 'true';
    root.dataset.points = String(count);
  }

  clear(text: string): void {
    message(this.element, text);
  }
}
