// The three SVG figures of the "Screening" panel (and the shared frame, ticks and axes of path_chart.ts): the fraction screened over the solver's epochs, the histogram of
// the static screening scores at the solution, and the thesis' interval-regression picture (one feature: each
// sample's interval [y - mu, y + mu], the fitted line, easy samples screened, hard ones kept). Each view marks
// itself data-drawn="true|false" and counts what it drew (data-points, data-bars, data-segments) for the e2e test.

import { svg } from '../dom';
import { formatValue } from '../format';

export const W = 520;
export const H = 240;
export const M = { left: 46, right: 52, top: 14, bottom: 36 };
export const IW = W - M.left - M.right;
export const IH = H - M.top - M.bottom;

export function frame(testid: string, label: string): SVGSVGElement {
  return svg('svg', {
    class: 'screening-chart',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': label,
    'data-testid': testid,
    'data-drawn': 'false',
  });
}

export function message(root: SVGSVGElement, text: string): void {
  root.replaceChildren(svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'chart-empty' }, text));
  root.dataset.drawn = 'false';
}

/** Round tick values covering [lo, hi] (about `count` of them). */
export function ticks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function axes(
  xs: number[],
  sx: (v: number) => number,
  ys: number[],
  sy: (v: number) => number,
  xLabel: string,
  yLabel: string,
  yFormat: (v: number) => string = (v) => formatValue(v, 3),
): SVGGElement {
  const g = svg('g', { class: 'axes' });
  g.append(svg('rect', { x: M.left, y: M.top, width: IW, height: IH, class: 'chart-bg' }));
  for (const v of ys) {
    g.append(
      svg('line', { x1: M.left, x2: M.left + IW, y1: sy(v), y2: sy(v), class: 'grid' }),
      svg('text', { x: M.left - 6, y: sy(v) + 4, 'text-anchor': 'end' }, yFormat(v)),
    );
  }
  for (const v of xs) {
    g.append(
      svg('line', { x1: sx(v), x2: sx(v), y1: M.top + IH, y2: M.top + IH + 4, class: 'tick' }),
      svg('text', { x: sx(v), y: M.top + IH + 16, 'text-anchor': 'middle' }, formatValue(v, 3)),
    );
  }
  g.append(
    svg('text', { x: M.left + IW / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis-label' }, xLabel),
    svg(
      'text',
      {
        x: 12,
        y: M.top + IH / 2,
        'text-anchor': 'middle',
        class: 'axis-label',
        transform: `rotate(-90 12 ${M.top + IH / 2})`,
      },
      yLabel,
    ),
  );
  return g;
}

export interface HistoryData {
  n: number;
  epochs: Int32Array;
  active: Int32Array;
  gap: Float64Array;
  /** Screened in the end (dynamic + the static test at the solution). */
  finalFraction: number;
}

/** (a) The fraction of samples screened after each gap check (1 - active / n), and the duality gap (log scale). */
export class HistoryChart {
  readonly element = frame('screening-history', 'fraction of samples screened over the solver epochs');

  draw(d: HistoryData): void {
    const root = this.element;
    const count = d.epochs.length;
    if (count === 0) {
      message(root, 'no gap check was made');
      return;
    }
    const last = d.epochs[count - 1];
    const sx = (e: number): number => M.left + (IW * e) / Math.max(1, last);
    const sy = (f: number): number => M.top + IH * (1 - f);
    const fractions = Array.from(d.active, (a) => 1 - a / d.n);
    // Gap on a log scale (right axis), over the decades it spans; non-positive gaps (rounding) are left out.
    const gaps = Array.from(d.gap).filter((g) => g > 0 && Number.isFinite(g));
    const gHi = Math.ceil(Math.log10(Math.max(...gaps, 1e-300)));
    const gLo = Math.min(gHi - 1, Math.floor(Math.log10(Math.min(...gaps, 1))));
    const sg = (g: number): number => M.top + (IH * (gHi - Math.log10(g))) / (gHi - gLo);

    const children: SVGElement[] = [
      axes(
        ticks(0, last, 6),
        sx,
        [0, 0.25, 0.5, 0.75, 1],
        sy,
        'epoch',
        'fraction screened',
        (v) => `${Math.round(v * 100)}%`,
      ),
    ];
    const decades = ticks(gLo, gHi, 5).filter((v) => Number.isInteger(v));
    for (const k of decades) {
      children.push(svg('text', { x: M.left + IW + 6, y: sg(10 ** k) + 4, class: 'gap-tick' }, `1e${k}`));
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
        'duality gap',
      ),
    );
    if (gaps.length > 1) {
      const pts = Array.from(d.epochs)
        .map((e, i) => [e, d.gap[i]] as const)
        .filter(([, g]) => g > 0 && Number.isFinite(g));
      children.push(svg('polyline', { class: 'gap-line', points: pts.map(([e, g]) => `${sx(e)},${sg(g)}`).join(' ') }));
    }
    children.push(
      svg('line', {
        class: 'final-line',
        x1: M.left,
        x2: M.left + IW,
        y1: sy(d.finalFraction),
        y2: sy(d.finalFraction),
      }),
      svg(
        'text',
        {
          class: 'final-label',
          x: M.left + IW - 4,
          y: sy(d.finalFraction) + (d.finalFraction > 0.9 ? 14 : -5),
          'text-anchor': 'end',
        },
        `final ${(100 * d.finalFraction).toFixed(1)}% (with the static test)`,
      ),
    );
    // A step line from epoch 0 (nothing screened) through every gap check.
    const steps = [`${sx(0)},${sy(0)}`];
    fractions.forEach((f, i) => {
      steps.push(`${sx(d.epochs[i])},${sy(i === 0 ? 0 : fractions[i - 1])}`, `${sx(d.epochs[i])},${sy(f)}`);
    });
    children.push(svg('polyline', { class: 'fraction-line', points: steps.join(' ') }));
    // Dots at the gap checks (thinned to at most 150 so long L1 runs stay light).
    const every = Math.ceil(count / 150);
    const dots = svg('g', { class: 'fraction-dots' });
    for (let i = 0; i < count; i += every) {
      dots.append(
        svg(
          'circle',
          { cx: sx(d.epochs[i]), cy: sy(fractions[i]), r: 2.6 },
          svg(
            'title',
            {},
            `epoch ${d.epochs[i]}: ${(100 * fractions[i]).toFixed(1)}% screened, gap ${formatValue(d.gap[i], 3)}`,
          ),
        ),
      );
    }
    children.push(dots);
    root.replaceChildren(...children);
    root.dataset.drawn = 'true';
    root.dataset.points = String(dots.childElementCount);
  }

  clear(text: string): void {
    message(this.element, text);
  }
}

/** (b) Histogram of the static scores at the solution (> 0: screened by the static test), stacked by outcome. */
export class ScoreHistogram {
  readonly element = frame('screening-histogram', 'histogram of the static screening scores');

  draw(scores: Float32Array, screened: Uint8Array): void {
    const root = this.element;
    // A typed array sorted natively: a dropped file can have 10^6 samples, and sorting a JS array of them with a
    // comparator paused the main thread for most of a second.
    const finite = new Float32Array(scores.length);
    let nFinite = 0;
    for (const s of scores) if (Number.isFinite(s)) finite[nFinite++] = s;
    if (nFinite === 0) {
      message(root, 'no finite score: this loss has no flat region, nothing can be screened');
      return;
    }
    // The central 98% of the scores (outliers go to the end bins), always with 0 as a bin edge.
    const sorted = finite.subarray(0, nFinite).sort();
    const q = (f: number): number => sorted[Math.min(sorted.length - 1, Math.floor(f * (sorted.length - 1)))];
    let lo = Math.min(q(0.01), 0);
    let hi = Math.max(q(0.99), 0);
    if (hi - lo < 1e-9) {
      lo -= 1;
      hi += 1;
    }
    const BINS = 40;
    const width = (hi - lo) / BINS;
    lo = Math.floor(lo / width) * width;
    const bins = Math.max(1, Math.ceil((hi - lo) / width));
    const kept = new Array<number>(bins).fill(0);
    const gone = new Array<number>(bins).fill(0);
    scores.forEach((s, i) => {
      if (!Number.isFinite(s)) return;
      const b = Math.min(bins - 1, Math.max(0, Math.floor((s - lo) / width)));
      (screened[i] ? gone : kept)[b] += 1;
    });
    const top = Math.max(...kept.map((k, b) => k + gone[b]), 1);
    const sx = (v: number): number => M.left + (IW * (v - lo)) / (bins * width);
    const sy = (c: number): number => M.top + IH * (1 - c / top);
    const bars = svg('g', { class: 'bars' });
    let count = 0;
    for (let b = 0; b < bins; b++) {
      const x = sx(lo + b * width) + 0.5;
      const w = Math.max(0.5, sx(lo + (b + 1) * width) - sx(lo + b * width) - 1);
      const range = `[${formatValue(lo + b * width, 3)}, ${formatValue(lo + (b + 1) * width, 3)})`;
      if (kept[b] > 0) {
        bars.append(
          svg(
            'rect',
            { class: 'bar-kept', x, width: w, y: sy(kept[b]), height: sy(0) - sy(kept[b]) },
            svg('title', {}, `${range}: ${kept[b]} kept`),
          ),
        );
        count += 1;
      }
      if (gone[b] > 0) {
        bars.append(
          svg(
            'rect',
            { class: 'bar-screened', x, width: w, y: sy(kept[b] + gone[b]), height: sy(0) - sy(gone[b]) },
            svg('title', {}, `${range}: ${gone[b]} screened`),
          ),
        );
        count += 1;
      }
    }
    root.replaceChildren(
      axes(
        ticks(lo, lo + bins * width, 6),
        sx,
        ticks(0, top, 4),
        sy,
        'static score at the solution (> 0: screened)',
        'samples',
        (v) => String(v),
      ),
      bars,
      svg('line', { class: 'zero-line', x1: sx(0), x2: sx(0), y1: M.top, y2: M.top + IH }),
      svg('text', { class: 'final-label', x: sx(0) + 4, y: M.top + 12 }, 'threshold 0'),
    );
    root.dataset.drawn = 'true';
    root.dataset.bars = String(count);
    root.dataset.nonFinite = String(scores.length - finite.length);
  }

  clear(text: string): void {
    message(this.element, text);
  }
}

export interface IntervalData {
  x: Float32Array;
  y: Float32Array;
  mu: number;
  slope: number;
  intercept: number;
  screened: Uint8Array;
}

/** (c) One feature: each sample's interval [y - mu, y + mu], the fitted line w x + b, screened vs kept. */
export class IntervalPicture {
  readonly element = frame(
    'screening-picture',
    'interval regression: the samples, their intervals and the fitted line',
  );

  draw(d: IntervalData): void {
    const root = this.element;
    let lo = Infinity;
    let hi = -Infinity;
    d.y.forEach((v) => {
      lo = Math.min(lo, v - d.mu);
      hi = Math.max(hi, v + d.mu);
    });
    for (const x of [-1, 1]) {
      lo = Math.min(lo, d.slope * x + d.intercept);
      hi = Math.max(hi, d.slope * x + d.intercept);
    }
    const pad = 0.05 * (hi - lo || 1);
    lo -= pad;
    hi += pad;
    const sx = (v: number): number => M.left + (IW * (v + 1)) / 2;
    const sy = (v: number): number => M.top + IH * (1 - (v - lo) / (hi - lo));
    const segments = svg('g', { class: 'intervals' });
    d.x.forEach((x, i) => {
      const cls = d.screened[i] ? 'screened' : 'kept';
      segments.append(
        svg(
          'g',
          { class: cls },
          svg('line', { x1: sx(x), x2: sx(x), y1: sy(d.y[i] - d.mu), y2: sy(d.y[i] + d.mu) }),
          svg('circle', { cx: sx(x), cy: sy(d.y[i]), r: 2.2 }),
          svg('title', {}, `x ${formatValue(x, 3)}, y ${formatValue(d.y[i], 3)}: ${cls}`),
        ),
      );
    });
    // In the corner away from the line: bottom right for a rising fit, top right for a falling one.
    const lx = M.left + IW - 250;
    const top = d.slope >= 0 ? M.top + IH - 52 : M.top + 3;
    const legendY = top + 9;
    const legend = svg(
      'g',
      { class: 'legend' },
      svg('rect', { x: lx - 8, y: top, width: 254, height: 49, class: 'legend-bg' }),
      svg('line', { class: 'legend-screened', x1: lx, x2: lx, y1: legendY - 6, y2: legendY + 4 }),
      svg('text', { x: lx + 8, y: legendY + 3 }, 'screened (easy): the line passes inside'),
      svg('line', { class: 'legend-kept', x1: lx, x2: lx, y1: legendY + 10, y2: legendY + 20 }),
      svg('text', { x: lx + 8, y: legendY + 19 }, 'kept (hard): interval [y − μ, y + μ]'),
      svg('line', { class: 'fit-line', x1: lx - 4, x2: lx + 4, y1: legendY + 30, y2: legendY + 30 }),
      svg(
        'text',
        { x: lx + 8, y: legendY + 34 },
        `fit: ${formatValue(d.slope, 3)} x ${d.intercept < 0 ? '−' : '+'} ${formatValue(Math.abs(d.intercept), 3)}`,
      ),
    );
    root.replaceChildren(
      axes(ticks(-1, 1, 4), sx, ticks(lo, hi, 5), sy, 'x', 'y'),
      segments,
      svg('line', {
        class: 'fit-line',
        x1: sx(-1),
        x2: sx(1),
        y1: sy(d.intercept - d.slope),
        y2: sy(d.intercept + d.slope),
      }),
      legend,
    );
    root.dataset.drawn = 'true';
    root.dataset.segments = String(d.x.length);
  }

  clear(text: string): void {
    message(this.element, text);
  }
}
