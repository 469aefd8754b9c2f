// The transport plan of one sequence onto a reference, as a heatmap: sequence positions along x (each k-mer drawn
// at the centre of its k letters, under the letters themselves), the reference's supports along y. Where a
// support's column of mass sits says which part of the sequence it pools (thesis ch. 2: P^T psi(x)).

import { viridis, viridisGradient } from '../colormap';
import { h } from '../dom';
import { formatValue } from '../format';
import { context, drawCells, placeholder, sizeCanvas } from './canvas';

const WIDTH = 760;
const LEFT = 46;
const RIGHT = 8;
const TOP = 30; // letters track
const BOTTOM = 30; // position axis
const PLOT_HEIGHT = 300; // CSS pixels for all supports, within [6, 24] per support

const rowHeight = (p: number): number => Math.max(6, Math.min(24, PLOT_HEIGHT / Math.max(1, p)));

const LETTER_COLOURS: Record<string, string> = { A: '#16a34a', C: '#2563eb', G: '#d97706', T: '#dc2626' };

export interface PlanData {
  sequence: string;
  /** q plans of n × p, back to back. */
  plans: Float32Array;
  n: number;
  p: number;
  q: number;
  k: number;
}

export class PlanView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly maxLabel: HTMLElement;
  private readonly reference: HTMLSelectElement;
  private readonly referenceField: HTMLElement;
  private data: PlanData | null = null;
  private height = TOP + BOTTOM + PLOT_HEIGHT;

  constructor() {
    this.canvas = h('canvas', {
      class: 'otke-plan',
      role: 'img',
      'data-testid': 'otke-plan',
      'data-drawn': 'false',
      'aria-label': 'Transport plan heatmap: no plan yet',
    });
    this.maxLabel = h('span', { 'data-testid': 'otke-plan-max' }, '—');
    this.reference = h('select', { id: 'otke-reference', 'data-testid': 'otke-reference' });
    this.referenceField = h(
      'div',
      { class: 'row', hidden: true },
      h('label', { for: 'otke-reference' }, 'Reference'),
      this.reference,
    );
    const ramp = h('span', { class: 'ramp', 'aria-hidden': 'true' });
    ramp.style.background = viridisGradient();
    this.element = h(
      'figure',
      { class: 'heatmap-figure' },
      this.referenceField,
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
          'Columns: the k-mers of the sequence, each under the centre of its k letters; rows: the supports of the ',
          'reference. Each k-mer sends mass 1/n, each support receives 1/p; bright cells show which stretch of the ',
          'sequence a support pools into the embedding.',
        ),
      ),
    );
    this.reference.addEventListener('change', () => this.redraw());
    sizeCanvas(this.canvas, WIDTH, this.height);
    this.clear('no plan yet');
  }

  draw(data: PlanData): void {
    this.data = data;
    if (this.reference.options.length !== data.q) {
      this.reference.replaceChildren(
        ...Array.from({ length: data.q }, (_, r) => h('option', { value: r }, `z${r + 1}`)),
      );
    }
    this.referenceField.hidden = data.q <= 1;
    const height = TOP + BOTTOM + Math.round(data.p * rowHeight(data.p));
    if (height !== this.height) {
      this.height = height;
      sizeCanvas(this.canvas, WIDTH, height);
    }
    this.redraw();
  }

  clear(text: string): void {
    this.data = null;
    placeholder(context(this.canvas, WIDTH, this.height), text, WIDTH, this.height);
    this.maxLabel.textContent = '—';
    this.canvas.dataset.drawn = 'false';
    this.canvas.setAttribute('aria-label', `Transport plan heatmap: ${text}`);
  }

  private redraw(): void {
    const d = this.data;
    if (d === null) return;
    const r = Math.min(d.q - 1, Math.max(0, Number(this.reference.value) || 0));
    const plan = d.plans.subarray(r * d.n * d.p, (r + 1) * d.n * d.p);
    let max = 0;
    for (const v of plan) max = Math.max(max, v);
    const ctx = context(this.canvas, WIDTH, this.height);
    const L = d.sequence.length;
    const plotW = WIDTH - LEFT - RIGHT;
    const row = rowHeight(d.p);
    const plotH = this.height - TOP - BOTTOM;
    const cw = plotW / L;

    // Letters: coloured blocks, with the letter when there is room.
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.font = `600 ${Math.min(11, Math.max(7, cw * 1.2))}px ui-monospace, Menlo, Consolas, monospace`;
    for (let i = 0; i < L; i++) {
      const letter = d.sequence[i].toUpperCase();
      ctx.fillStyle = LETTER_COLOURS[letter] ?? '#64748b';
      ctx.globalAlpha = 0.18;
      ctx.fillRect(LEFT + i * cw, 4, Math.max(1, cw - 0.5), TOP - 10);
      ctx.globalAlpha = 1;
      if (cw >= 6) ctx.fillText(letter, LEFT + (i + 0.5) * cw, 4 + (TOP - 10) / 2 + 0.5);
    }

    // The plan, transposed to supports × k-mers; k-mer i spans letters [i + (k-1)/2, i + (k+1)/2).
    ctx.fillStyle = '#f1f5f9';
    ctx.fillRect(LEFT, TOP, plotW, plotH);
    drawCells(
      ctx,
      d.p,
      d.n,
      (j, i) => viridis(max > 0 ? plan[i * d.p + j] / max : 0),
      LEFT + ((d.k - 1) / 2) * cw,
      TOP,
      d.n * cw,
      plotH,
    );
    ctx.strokeStyle = '#cbd5e1';
    ctx.strokeRect(LEFT + 0.5, TOP + 0.5, plotW - 1, plotH - 1);

    // Axes: supports on the left, letter positions (1-based) below.
    ctx.fillStyle = '#475569';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const every = Math.max(1, Math.ceil(14 / row));
    for (let j = 0; j < d.p; j += every) ctx.fillText(String(j + 1), LEFT - 6, TOP + (j + 0.5) * (plotH / d.p));
    ctx.save();
    ctx.translate(11, TOP + plotH / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText('support', 0, 0);
    ctx.restore();
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (let pos = 1; pos <= L; pos += pos === 1 ? 9 : 10) {
      const x = LEFT + (pos - 0.5) * cw;
      ctx.fillRect(x - 0.5, TOP + plotH, 1, 4);
      ctx.fillText(String(pos), x, TOP + plotH + 6);
    }
    ctx.textAlign = 'right';
    ctx.fillText('position', WIDTH - RIGHT, TOP + plotH + 18);

    this.maxLabel.textContent = formatValue(max, 3);
    this.canvas.dataset.drawn = 'true';
    this.canvas.setAttribute(
      'aria-label',
      `Transport plan heatmap of reference ${r + 1}: ${d.n} k-mers × ${d.p} supports, largest entry ${formatValue(max, 3)}`,
    );
  }
}
