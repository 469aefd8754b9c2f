// The point clouds and the transport plan drawn as an SVG: source points in blue, target points in orange (area
// proportional to weight), and a line for every pair (i, j) that carries a visible share of the mass.

import { svg } from '../dom';
import type { Point } from './points';

const SIZE = 500; // viewBox units per unit-square side
/** Pairs below this fraction of the largest entry are left out: invisible anyway, and they would cost n·p nodes. */
const MIN_RELATIVE_MASS = 0.02;
/** Cap on drawn lines, so a cloud grown by many clicks cannot produce tens of thousands of SVG nodes. */
const MAX_LINES = 4000;

export interface DrawnPlan {
  source: readonly Point[];
  target: readonly Point[];
  plan: Float32Array;
}

export type AddPoint = (x: number, y: number, toTarget: boolean) => void;

export class SceneView {
  readonly element: SVGSVGElement;
  private readonly lines: SVGGElement;
  private readonly targets: SVGGElement;
  private readonly sources: SVGGElement;

  constructor(onAdd: AddPoint) {
    this.lines = svg('g', { class: 'plan-lines' });
    this.targets = svg('g', { class: 'cloud cloud-target' });
    this.sources = svg('g', { class: 'cloud cloud-source' });
    this.element = svg(
      'svg',
      {
        viewBox: `0 0 ${SIZE} ${SIZE}`,
        class: 'scene',
        role: 'img',
        'data-testid': 'ot-scene',
        'aria-label':
          'Source and target point clouds with transport plan lines. Click to add a source point, ' +
          'Shift+click to add a target point.',
      },
      svg('rect', { class: 'scene-bg', x: 0, y: 0, width: SIZE, height: SIZE }),
      this.grid(),
      this.lines,
      this.targets,
      this.sources,
    );

    this.element.addEventListener('click', (event) => {
      const ctm = this.element.getScreenCTM();
      if (!ctm) return;
      const at = new DOMPoint(event.clientX, event.clientY).matrixTransform(ctm.inverse());
      const clamp = (v: number): number => Math.min(1, Math.max(0, v / SIZE));
      onAdd(clamp(at.x), clamp(at.y), event.shiftKey);
    });
  }

  setClouds(source: readonly Point[], target: readonly Point[]): void {
    this.drawCloud(this.sources, source);
    this.drawCloud(this.targets, target);
  }

  /** Lines for a solved plan, drawn with the coordinates it was solved for; null removes them. */
  setPlan(drawn: DrawnPlan | null): void {
    this.lines.replaceChildren();
    if (!drawn) return;
    const { source, target, plan } = drawn;
    const p = target.length;
    let max = 0;
    for (const v of plan) if (v > max) max = v;
    if (!(max > 0)) return;

    const pairs: Array<[number, number]> = [];
    for (let k = 0; k < plan.length; k++) if (plan[k] >= MIN_RELATIVE_MASS * max) pairs.push([k, plan[k]]);
    if (pairs.length > MAX_LINES) pairs.sort((u, v) => v[1] - u[1]).length = MAX_LINES;
    // Heaviest last, so strong links are drawn on top of faint ones.
    pairs.sort((u, v) => u[1] - v[1]);
    for (const [k, mass] of pairs) {
      const s = source[Math.floor(k / p)];
      const t = target[k % p];
      this.lines.append(
        svg('line', {
          x1: s.x * SIZE,
          y1: s.y * SIZE,
          x2: t.x * SIZE,
          y2: t.y * SIZE,
          // Opacity ∝ mass, capped below 1 so that crossing heavy lines still show the points under them.
          'stroke-opacity': ((0.85 * mass) / max).toFixed(3),
        }),
      );
    }
  }

  private drawCloud(group: SVGGElement, points: readonly Point[]): void {
    const total = points.reduce((s, pt) => s + pt.w, 0);
    group.replaceChildren(
      ...points.map((pt) => {
        // Area ∝ weight; the average point gets radius 6 whatever the cloud size.
        const r = Math.min(13, Math.max(2.5, 6 * Math.sqrt((pt.w * points.length) / total)));
        return svg('circle', { cx: (pt.x * SIZE).toFixed(1), cy: (pt.y * SIZE).toFixed(1), r: r.toFixed(2) });
      }),
    );
  }

  private grid(): SVGGElement {
    const group = svg('g', { class: 'scene-grid', 'aria-hidden': 'true' });
    for (let k = 1; k < 10; k++) {
      const v = (k * SIZE) / 10;
      group.append(svg('line', { x1: v, y1: 0, x2: v, y2: SIZE }), svg('line', { x1: 0, y1: v, x2: SIZE, y2: v }));
    }
    return group;
  }
}
