// The colour of an atom's saliency on the drawn molecule: a light-to-dark orange-red ramp (ColorBrewer OrRd), so
// that atom labels stay readable on the pale end and the most looked-at atoms stand out on a white page.

import { rampColour, rampGradient, type Rgb } from '../colormap';

const ANCHORS: ReadonlyArray<Rgb> = [
  [255, 247, 236],
  [253, 212, 158],
  [252, 141, 89],
  [215, 48, 31],
  [127, 0, 0],
];

/** RGB in 0..255 for t in [0, 1] (clamped). */
export function saliencyColour(t: number): [number, number, number] {
  return rampColour(ANCHORS, t);
}

export function saliencyGradient(direction = 'to right'): string {
  return rampGradient(ANCHORS, direction);
}
