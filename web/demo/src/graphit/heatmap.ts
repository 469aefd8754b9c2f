// An n × n matrix over the atoms of a molecule as an SVG heatmap, atom labels (symbol and index) on both axes:
// the attention of a layer (row i: how atom i spreads its attention over the atoms) or the kernel on the graph.

import { viridis, viridisGradient } from '../colormap';
import { h, svg } from '../dom';
import { formatValue } from '../format';

const SIZE = 380; // the plot square, CSS pixels
const MARGIN = 44; // room for the labels

export interface HeatmapData {
  n: number;
  atoms: string[];
  /** Row-major n × n. */
  values: Float32Array;
}

export class Heatmap {
  readonly element: HTMLElement;
  private readonly plot: SVGSVGElement;
  private readonly maxLabel: HTMLElement;

  constructor(
    testId: string,
    private readonly what: string,
    caption: string,
  ) {
    this.plot = svg('svg', {
      class: 'graphit-heatmap',
      'data-testid': testId,
      'data-drawn': 'false',
      'data-n': 0,
      role: 'img',
      viewBox: `0 0 ${SIZE + MARGIN + 6} ${SIZE + MARGIN + 6}`,
      'aria-label': `${what}: nothing drawn yet`,
    });
    this.maxLabel = h('span', { 'data-testid': `${testId}-max` }, '—');
    const ramp = h('span', { class: 'ramp', 'aria-hidden': 'true' });
    ramp.style.background = viridisGradient();
    this.element = h(
      'figure',
      { class: 'heatmap-figure' },
      this.plot,
      h(
        'figcaption',
        {},
        h('div', { class: 'legend-ramp' }, h('span', {}, '0'), ramp, h('span', {}, 'max = '), this.maxLabel),
        h('p', { class: 'caption-text' }, caption),
      ),
    );
  }

  draw(d: HeatmapData): void {
    const { n } = d;
    let max = 0;
    for (const v of d.values) max = Math.max(max, v);
    const cell = SIZE / Math.max(1, n);
    const font = Math.max(6, Math.min(12, cell * 0.55));
    const label = (i: number): string => `${d.atoms[i] ?? '?'}${i}`;
    const cells = svg('g', { class: 'cells' });
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const v = d.values[i * n + j];
        const [r, g, b] = viridis(max > 0 ? v / max : 0);
        cells.append(
          svg(
            'rect',
            {
              class: 'cell',
              x: (MARGIN + j * cell).toFixed(2),
              y: (MARGIN + i * cell).toFixed(2),
              width: (cell + 0.3).toFixed(2),
              height: (cell + 0.3).toFixed(2),
              fill: `rgb(${Math.round(r)} ${Math.round(g)} ${Math.round(b)})`,
            },
            svg('title', {}, `${label(i)} → ${label(j)}: ${formatValue(v, 3)}`),
          ),
        );
      }
    }
    const rows = svg('g', { class: 'axis rows', 'font-size': font });
    const cols = svg('g', { class: 'axis cols', 'font-size': font });
    for (let i = 0; i < n; i++) {
      const c = MARGIN + (i + 0.5) * cell;
      rows.append(svg('text', { x: MARGIN - 4, y: c, 'text-anchor': 'end', 'dominant-baseline': 'central' }, label(i)));
      cols.append(
        svg(
          'text',
          {
            x: c,
            y: MARGIN - 4,
            'text-anchor': 'start',
            'dominant-baseline': 'central',
            transform: `rotate(-90 ${c} ${MARGIN - 4})`,
          },
          label(i),
        ),
      );
    }
    this.plot.replaceChildren(
      cells,
      rows,
      cols,
      svg('rect', { class: 'frame', x: MARGIN, y: MARGIN, width: SIZE, height: SIZE, fill: 'none' }),
    );
    this.plot.dataset.drawn = 'true';
    this.plot.dataset.n = String(n);
    this.plot.setAttribute('aria-label', `${this.what}: ${n} × ${n} atoms`);
    this.maxLabel.textContent = formatValue(max, 3);
  }

  clear(text: string): void {
    this.plot.replaceChildren(
      svg(
        'text',
        { x: (SIZE + MARGIN) / 2, y: (SIZE + MARGIN) / 2, 'text-anchor': 'middle', class: 'placeholder' },
        text,
      ),
    );
    this.plot.dataset.drawn = 'false';
    this.plot.dataset.n = '0';
    this.plot.setAttribute('aria-label', `${this.what}: ${text}`);
    this.maxLabel.textContent = '—';
  }
}
