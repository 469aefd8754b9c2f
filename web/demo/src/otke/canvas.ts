// Canvas helpers shared by the OTKE views: a backing store at device resolution with a CSS-pixel transform, and
// matrices drawn as one image of one pixel per cell, scaled up without smoothing (crisp cells, one drawImage).

export type Rgb = [number, number, number];

/** Sizes `canvas` for `width` × `height` CSS pixels at the device's resolution (at most 3x). */
export function sizeCanvas(canvas: HTMLCanvasElement, width: number, height: number): void {
  const dpr = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.aspectRatio = `${width} / ${height}`;
}

/** A cleared 2D context drawing in CSS pixels of a `width`-wide layout. */
export function context(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(canvas.width / width, 0, 0, canvas.height / height, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

/** Draws a rows × cols matrix whose cell colour is colour(r, c) into the rectangle (x, y, w, h). */
export function drawCells(
  ctx: CanvasRenderingContext2D,
  rows: number,
  cols: number,
  colour: (r: number, c: number) => Rgb,
  x: number,
  y: number,
  w: number,
  h: number,
): void {
  if (rows === 0 || cols === 0) return;
  const image = new ImageData(cols, rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) image.data.set([...colour(r, c), 255], 4 * (r * cols + c));
  }
  const cells = new OffscreenCanvas(cols, rows);
  cells.getContext('2d')!.putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(cells, x, y, w, h);
}

/** Blue (negative) - white (0) - red (positive) for t in [-1, 1]: signed values such as embedding coordinates. */
export function diverging(t: number): Rgb {
  const x = Math.max(-1, Math.min(1, Number.isFinite(t) ? t : 0));
  const [r, g, b]: Rgb = x < 0 ? [37, 99, 235] : [220, 38, 38];
  const a = Math.abs(x) ** 0.8; // a little lift, so small coordinates still show
  return [255 + a * (r - 255), 255 + a * (g - 255), 255 + a * (b - 255)];
}

/** A CSS gradient for diverging()'s legend. */
export const DIVERGING_GRADIENT = 'linear-gradient(to right, rgb(37 99 235), #fff, rgb(220 38 38))';

/** Placeholder text centred in the rectangle. */
export function placeholder(ctx: CanvasRenderingContext2D, text: string, w: number, h: number): void {
  ctx.fillStyle = '#f1f5f9';
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = '#64748b';
  ctx.font = '14px system-ui, sans-serif';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(text, w / 2, h / 2);
}
