import { describe, expect, it } from 'vitest';
import {
  displayRectToPdf,
  displayedSize,
  normalRotation,
  pdfRectToDisplay,
  wholeRect,
  type PageBox,
} from './page-geometry.js';

// A US Letter page whose crop box does not start at the origin, as scanned and cropped PDFs have.
const box = { x: 10, y: 20, width: 612, height: 792 };
const page = (rotation: PageBox['rotation']): PageBox => ({ box, rotation });
// 50 points right of the crop box's left edge and 100 above its bottom edge, 200 × 30.
const widget = { x: 60, y: 120, width: 200, height: 30 };

describe('page geometry', () => {
  it('measures a page as displayed: a quarter turn swaps width and height', () => {
    expect(displayedSize(page(0))).toEqual({ width: 612, height: 792 });
    expect(displayedSize(page(90))).toEqual({ width: 792, height: 612 });
    expect(displayedSize(page(180))).toEqual({ width: 612, height: 792 });
    expect(displayedSize(page(270))).toEqual({ width: 792, height: 612 });
  });

  it('places a PDF rectangle from the top-left corner of the page as a viewer turns it', () => {
    // Unturned: y counts down from the top: 792 - (100 + 30) = 662.
    expect(pdfRectToDisplay(widget, page(0))).toEqual({ x: 50, y: 662, width: 200, height: 30 });
    // Turned clockwise: the page's left edge is now on top, its bottom edge on the left.
    expect(pdfRectToDisplay(widget, page(90))).toEqual({ x: 100, y: 50, width: 30, height: 200 });
    // Upside down: the bottom-left corner is now top-right.
    expect(pdfRectToDisplay(widget, page(180))).toEqual({ x: 362, y: 100, width: 200, height: 30 });
    // Turned anticlockwise: the page's left edge is now at the bottom, its top edge on the left.
    expect(pdfRectToDisplay(widget, page(270))).toEqual({ x: 662, y: 362, width: 30, height: 200 });
  });

  it.each([0, 90, 180, 270] as const)('converts back to PDF space exactly (rotation %i)', (r) => {
    expect(displayRectToPdf(pdfRectToDisplay(widget, page(r)), page(r))).toEqual(widget);
  });

  it('reads /Rotate as viewers do: multiples of 90, negative ones too, anything else as 0', () => {
    expect([0, 90, 180, 270, 360, 450, -90, -270, 45, 91].map(normalRotation)).toEqual([
      0, 90, 180, 270, 0, 90, 270, 90, 0, 0,
    ]);
  });

  it('rounds to whole points by the corners, never below 1 × 1', () => {
    expect(wholeRect({ x: 49.5, y: 71.6, width: 201, height: 20.8 })).toEqual({
      x: 50,
      y: 72,
      width: 201,
      height: 20,
    });
    expect(wholeRect({ x: 10.2, y: 10.2, width: 0.1, height: 0 })).toEqual({
      x: 10,
      y: 10,
      width: 1,
      height: 1,
    });
  });
});
