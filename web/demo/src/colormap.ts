// Colour ramps: evenly spaced anchor colours with linear interpolation between them.

export type Rgb = readonly [number, number, number];

/** RGB in 0..255 for t in [0, 1] (clamped; NaN counts as 0) on the ramp through `anchors`. */
export function rampColour(anchors: ReadonlyArray<Rgb>, t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (anchors.length - 1);
  const k = Math.min(anchors.length - 2, Math.floor(x));
  const f = x - k;
  const [r0, g0, b0] = anchors[k];
  const [r1, g1, b1] = anchors[k + 1];
  return [r0 + f * (r1 - r0), g0 + f * (g1 - g0), b0 + f * (b1 - b0)];
}

/** A CSS linear-gradient through the anchors, for colour legends. */
export function rampGradient(anchors: ReadonlyArray<Rgb>, direction = 'to right'): string {
  const stops = anchors.map(([r, g, b], i) => `rgb(${r} ${g} ${b}) ${(100 * i) / (anchors.length - 1)}%`);
  return `linear-gradient(${direction}, ${stops.join(', ')})`;
}

// Viridis (perceptually uniform, readable in greyscale and by most colour-blind readers), as 9 anchors:
// indistinguishable from the 256-entry table at heatmap cell sizes.
const VIRIDIS: ReadonlyArray<Rgb> = [
  [68, 1, 84],
  [71, 45, 123],
  [59, 82, 139],
  [44, 114, 142],
  [33, 145, 140],
  [39, 173, 129],
  [92, 200, 99],
  [170, 220, 50],
  [253, 231, 37],
];

/** RGB for t in [0, 1] (clamped). */
export function viridis(t: number): [number, number, number] {
  return rampColour(VIRIDIS, t);
}

/** A CSS linear-gradient through viridis, for the heatmap's colour legend. */
export function viridisGradient(direction = 'to right'): string {
  return rampGradient(VIRIDIS, direction);
}
