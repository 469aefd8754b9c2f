// The colour of an atom's saliency on the drawn molecule: a light-to-dark orange-red ramp (ColorBrewer OrRd), so
// that atom labels stay readable on the pale end and the most looked-at atoms stand out on a white page.

const ANCHORS: ReadonlyArray<readonly [number, number, number]> = [
  [255, 247, 236], [253, 212, 158], [252, 141, 89], [215, 48, 31], [127, 0, 0],
];

/** RGB in 0..255 for t in [0, 1] (clamped). */
export function saliencyColour(t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (ANCHORS.length - 1);
  const k = Math.min(ANCHORS.length - 2, Math.floor(x));
  const f = x - k;
  const [r0, g0, b0] = ANCHORS[k];
  const [r1, g1, b1] = ANCHORS[k + 1];
  return [r0 + f * (r1 - r0), g0 + f * (g1 - g0), b0 + f * (b1 - b0)];
}

export function saliencyGradient(direction = 'to right'): string {
  const stops = ANCHORS.map(([r, g, b], i) => `rgb(${r} ${g} ${b}) ${(100 * i) / (ANCHORS.length - 1)}%`);
  return `linear-gradient(${direction}, ${stops.join(', ')})`;
}
