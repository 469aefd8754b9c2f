// The eps slider is logarithmic over 0.001..10 in steps of the R10 preferred-number series (10 per decade:
// 1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8). Each step is ~26% apart, and the values shown are round numbers
// (0.05, not 10^-1.3 = 0.0501) that can be typed into other tools to reproduce a result.

const R10 = [1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8];

/** Slider positions: eps = 10^(step / 10), rounded to R10. */
export const EPS_STEP_MIN = -30; // 0.001
export const EPS_STEP_MAX = 10; // 10
export const EPS_STEP_DEFAULT = -13; // 0.05

export function epsFromStep(step: number): number {
  const decade = Math.floor(step / 10);
  const mantissa = R10[step - 10 * decade];
  // toPrecision strips the binary noise of mantissa * 10^decade (5 * 0.01 = 0.05, but 3.15 * 0.001 is not exact).
  return Number((mantissa * 10 ** decade).toPrecision(3));
}

export function formatEps(eps: number): string {
  return String(eps);
}
