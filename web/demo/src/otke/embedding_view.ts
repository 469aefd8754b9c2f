// The embedding Phi(x) of one sequence, for one reference: a p × K heatmap (supports × Nyström anchors), signed
// colours. Row j is sqrt(p/q) times the plan-weighted mean of the k-mer embeddings that support j received.

import { h } from '../dom';
import { formatValue } from '../format';
import { context, DIVERGING_GRADIENT, diverging, drawCells, placeholder, sizeCanvas } from './canvas';

const WIDTH = 640;
// Square cells where that fits in [90, 240] CSS pixels of height.
const heightFor = (p: number, anchors: number): number =>
  Math.round(Math.max(90, Math.min(240, (WIDTH * p) / anchors)));

export interface EmbeddingData {
  /** q × p × K */
  embedding: Float32Array;
  p: number;
  q: number;
  anchors: number;
  reference: number;
}

export class EmbeddingView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly maxLabel: HTMLElement;
  private readonly shape: HTMLElement;
  private height = 160;

  constructor() {
    this.canvas = h('canvas', {
      class: 'otke-embedding',
      role: 'img',
      'data-testid': 'otke-embedding',
      'data-drawn': 'false',
      'aria-label': 'Embedding heatmap: no embedding yet',
    });
    sizeCanvas(this.canvas, WIDTH, this.height);
    this.maxLabel = h('span', { 'data-testid': 'otke-embedding-max' }, '—');
    this.shape = h('span', { 'data-testid': 'otke-embedding-shape' }, '');
    const ramp = h('span', { class: 'ramp', 'aria-hidden': 'true' });
    ramp.style.background = DIVERGING_GRADIENT;
    this.element = h(
      'figure',
      { class: 'heatmap-figure' },
      this.canvas,
      h(
        'figcaption',
        {},
        h('div', { class: 'legend-ramp' }, h('span', {}, '−m'), ramp, h('span', {}, '+m, m = '), this.maxLabel),
        h(
          'p',
          { class: 'caption-text' },
          'Φ(x) of reference 1: rows are supports, columns Nyström anchors (',
          this.shape,
          '). This vector, flattened, ',
          'is what the linear head reads.',
        ),
      ),
    );
    placeholder(context(this.canvas, WIDTH, this.height), 'no embedding yet', WIDTH, this.height);
  }

  draw(d: EmbeddingData): void {
    const size = d.p * d.anchors;
    const phi = d.embedding.subarray(d.reference * size, (d.reference + 1) * size);
    let m = 0;
    for (const v of phi) m = Math.max(m, Math.abs(v));
    const height = heightFor(d.p, d.anchors);
    if (height !== this.height) {
      this.height = height;
      sizeCanvas(this.canvas, WIDTH, height);
    }
    const ctx = context(this.canvas, WIDTH, height);
    drawCells(ctx, d.p, d.anchors, (j, c) => diverging(m > 0 ? phi[j * d.anchors + c] / m : 0), 0, 0, WIDTH, height);
    ctx.strokeStyle = '#cbd5e1';
    ctx.strokeRect(0.5, 0.5, WIDTH - 1, height - 1);
    this.maxLabel.textContent = formatValue(m, 3);
    this.shape.textContent = `p × K = ${d.p} × ${d.anchors}`;
    this.canvas.dataset.drawn = 'true';
    this.canvas.setAttribute(
      'aria-label',
      `Embedding heatmap: ${d.p} supports × ${d.anchors} anchors, largest |value| ${formatValue(m, 3)}`,
    );
  }

  clear(text: string): void {
    placeholder(context(this.canvas, WIDTH, this.height), text, WIDTH, this.height);
    this.maxLabel.textContent = '—';
    this.canvas.dataset.drawn = 'false';
  }
}
