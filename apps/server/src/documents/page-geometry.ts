// Where things sit on a page. Pal documents place fields and signatures in the page's *displayed*
// space: units of the PDF (points, 1/72 in) from the top-left corner of the page as a viewer shows
// it, that is the crop box turned by the page's /Rotate (docs/pal-format.md). A PDF itself measures
// from the bottom-left corner of the unturned page; these functions convert between the two, so
// the widgets read at deploy and the boxes drawn on a completed PDF land where a person saw them.

/** x, y of the corner nearest the origin, then width and height (all in points). */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A PDF page as pdf-lib gives it: its crop box in PDF space and its /Rotate (clockwise). */
export interface PageBox {
  box: Rect;
  rotation: 0 | 90 | 180 | 270;
}

/** The page's size as displayed: width and height swap on a quarter turn. */
export function displayedSize(page: PageBox): { width: number; height: number } {
  const { width, height } = page.box;
  return page.rotation === 90 || page.rotation === 270
    ? { width: height, height: width }
    : { width, height };
}

/** /Rotate may be any multiple of 90, negative too; anything else counts as 0, as viewers do. */
export function normalRotation(degrees: number): PageBox['rotation'] {
  if (!Number.isInteger(degrees) || degrees % 90 !== 0) return 0;
  return (((degrees % 360) + 360) % 360) as PageBox['rotation'];
}

/** A point of PDF space → the displayed page, from its top-left corner. */
function pointToDisplay(px: number, py: number, page: PageBox): [number, number] {
  const u = px - page.box.x;
  const v = py - page.box.y;
  const { width: w, height: h } = page.box;
  switch (page.rotation) {
    case 0:
      return [u, h - v];
    case 90:
      return [v, u];
    case 180:
      return [w - u, v];
    case 270:
      return [h - v, w - u];
  }
}

/** A point of the displayed page (top-left origin) → PDF space. The inverse of pointToDisplay. */
function pointToPdf(dx: number, dy: number, page: PageBox): [number, number] {
  const { width: w, height: h } = page.box;
  let u: number, v: number;
  switch (page.rotation) {
    case 0:
      [u, v] = [dx, h - dy];
      break;
    case 90:
      [u, v] = [dy, dx];
      break;
    case 180:
      [u, v] = [w - dx, dy];
      break;
    case 270:
      [u, v] = [w - dy, h - dx];
      break;
  }
  return [u + page.box.x, v + page.box.y];
}

function spanning([x1, y1]: [number, number], [x2, y2]: [number, number]): Rect {
  const x = Math.min(x1, x2);
  const y = Math.min(y1, y2);
  return { x, y, width: Math.max(x1, x2) - x, height: Math.max(y1, y2) - y };
}

/** A rectangle of PDF space (a widget's /Rect) as the displayed page shows it. */
export function pdfRectToDisplay(rect: Rect, page: PageBox): Rect {
  return spanning(
    pointToDisplay(rect.x, rect.y, page),
    pointToDisplay(rect.x + rect.width, rect.y + rect.height, page),
  );
}

/** A rectangle of the displayed page (a field's x, y, width, height) in PDF space, for drawing. */
export function displayRectToPdf(rect: Rect, page: PageBox): Rect {
  return spanning(
    pointToPdf(rect.x, rect.y, page),
    pointToPdf(rect.x + rect.width, rect.y + rect.height, page),
  );
}

/**
 * Whole units, as the spec's Field and Signature carry them: the corners rounded to the nearest
 * unit, so a box never grows or shrinks by more than half a unit on a side. At least 1 wide and high.
 */
export function wholeRect(rect: Rect): Rect {
  const x = Math.round(rect.x);
  const y = Math.round(rect.y);
  return {
    x,
    y,
    width: Math.max(1, Math.round(rect.x + rect.width) - x),
    height: Math.max(1, Math.round(rect.y + rect.height) - y),
  };
}
