// The transport plan as an n × p heatmap (rows: source points, columns: target points), with the plan's row sums
// in a strip on the right and its column sums in a strip below, each against a tick at its target (a_i or b_j).

import { h } from '../dom';
import { viridis, viridisGradient } from '../colormap';
import { formatValue } from '../format';

const WIDTH = 440; // CSS pixels; the canvas is scaled to fit its column
const HEIGHT = 360;
const STRIP = 46;
const GAP = 6;

export interface HeatmapData {
  plan: Float32Array;
  n: number;
  p: number;
  rowSums: Float64Array;
  colSums: Float64Array;
  a: Float32Array;
  b: Float32Array;
}

export class HeatmapView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly maxLabel: HTMLElement;

  constructor() {
    this.canvas = h('canvas', {
      class: 'heatmap',
      role: 'img',
      'data-testid': 'ot-heatmap',
      'aria-label': 'Transport plan heatmap: no plan yet',
    });
    this.maxLabel = h('span', { 'data-testid': 'ot-plan-max' }, '—');
    const ramp = h('span', { class: 'ramp', 'aria-hidden': 'true' });
    ramp.style.background = viridisGradient();
    this.element = h(
      'figure',
      { class: 'heatmap-figure' },
      this.canvas,
      h(
        'figcaption',
        {},
        h(
          'div',
          { class: 'legend-ramp' },
          h('span', {}, '0'),
          ramp,
          h('span', {}, 'max P', h('sub', {}, 'ij'), ' = '),
          this.maxLabel,
        ),
        h(
          'p',
          { class: 'caption-text' },
          'Rows: source points, columns: target points (both ordered by height). ',
          'Strips: row sums (right, blue) and column sums (below, orange); black ticks mark the target marginals a and b.',
        ),
      ),
    );
    this.resize();
    this.clear();
  }

  draw(data: HeatmapData): void {
    const { plan, n, p, rowSums, colSums, a, b } = data;
    const ctx = this.context();
    let max = 0;
    for (const v of plan) if (v > max) max = v;
    this.maxLabel.textContent = formatValue(max, 3);
    this.canvas.setAttribute('aria-label', `Transport plan heatmap, ${n} × ${p}, largest entry ${formatValue(max, 3)}`);

    // One pixel per entry, scaled up without smoothing: crisp cells at any n, p, and one drawImage instead of n·p fills.
    const cells = new OffscreenCanvas(p, n);
    const image = new ImageData(p, n);
    for (let k = 0; k < n * p; k++) {
      const [r, g, bl] = viridis(max > 0 ? plan[k] / max : 0);
      image.data.set([r, g, bl, 255], 4 * k);
    }
    cells.getContext('2d')!.putImageData(image, 0, 0);
    const w = WIDTH - STRIP - GAP;
    const hh = HEIGHT - STRIP - GAP;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cells, 0, 0, w, hh);
    ctx.strokeStyle = '#cbd5e1';
    ctx.strokeRect(0.5, 0.5, w - 1, hh - 1);

    this.strip(ctx, rowSums, a, { x: w + GAP, y: 0, along: hh, across: STRIP, vertical: true, colour: '#2563eb' });
    this.strip(ctx, colSums, b, { x: 0, y: hh + GAP, along: w, across: STRIP, vertical: false, colour: '#ea580c' });
  }

  clear(): void {
    const ctx = this.context();
    ctx.fillStyle = '#f1f5f9';
    ctx.fillRect(0, 0, WIDTH - STRIP - GAP, HEIGHT - STRIP - GAP);
    ctx.fillStyle = '#64748b';
    ctx.font = '14px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.fillText('no plan', (WIDTH - STRIP - GAP) / 2, (HEIGHT - STRIP - GAP) / 2);
    this.maxLabel.textContent = '—';
    this.canvas.setAttribute('aria-label', 'Transport plan heatmap: no plan');
  }

  /** Bars for the plan's sums with a tick at each target value, on a shared scale so deviations would show. */
  private strip(
    ctx: CanvasRenderingContext2D,
    sums: Float64Array,
    targets: Float32Array,
    at: { x: number; y: number; along: number; across: number; vertical: boolean; colour: string },
  ): void {
    const count = sums.length;
    let scale = 0;
    for (let k = 0; k < count; k++) scale = Math.max(scale, sums[k], targets[k]);
    if (!(scale > 0) || count === 0) return;
    const cell = at.along / count;
    for (let k = 0; k < count; k++) {
      const start = k * cell;
      const bar = (sums[k] / scale) * at.across;
      const tick = (targets[k] / scale) * at.across;
      ctx.fillStyle = at.colour;
      ctx.globalAlpha = 0.55;
      if (at.vertical) ctx.fillRect(at.x, at.y + start, bar, Math.max(1, cell - 1));
      else ctx.fillRect(at.x + start, at.y, Math.max(1, cell - 1), bar);
      ctx.globalAlpha = 1;
      ctx.fillStyle = '#0f172a';
      if (at.vertical) ctx.fillRect(at.x + tick - 1, at.y + start, 2, Math.max(1, cell - 1));
      else ctx.fillRect(at.x + start, at.y + tick - 1, Math.max(1, cell - 1), 2);
    }
  }

  private context(): CanvasRenderingContext2D {
    const ctx = this.canvas.getContext('2d')!;
    ctx.setTransform(this.canvas.width / WIDTH, 0, 0, this.canvas.height / HEIGHT, 0, 0);
    ctx.clearRect(0, 0, WIDTH, HEIGHT);
    return ctx;
  }

  private resize(): void {
    // Backing store at device resolution, so strips and ticks stay sharp on high-DPI screens.
    const dpr = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
    this.canvas.width = Math.round(WIDTH * dpr);
    this.canvas.height = Math.round(HEIGHT * dpr);
  }
}
