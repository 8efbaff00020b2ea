// The layout the sandbox's written-back state rests on, read from the QuickJS build itself, and
// refused for a build laid out otherwise.
import { describe, expect, it } from 'vitest';
import { quickjsLayout, readLayout } from './wasm-layout.js';

const MiB = 1024 * 1024;

/** A WASM module of the given sections: [id, contents] each. */
function wasm(...sections: [number, number[]][]): Uint8Array {
  const bytes = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  for (const [id, contents] of sections) bytes.push(id, ...uleb(contents.length), ...contents);
  return Uint8Array.from(bytes);
}

function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    const byte = value & 0x7f;
    value >>>= 7;
    out.push(value ? byte | 0x80 : byte);
  } while (value);
  return out;
}

function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) return [...out, byte];
    out.push(byte | 0x80);
  }
}

/** The global section: `count` mutable i32 globals starting at `top`. */
const globals = (top: number, count = 1): [number, number[]] => [
  6,
  [
    ...uleb(count),
    ...Array.from({ length: count }, () => [0x7f, 0x01, 0x41, ...sleb(top), 0x0b]).flat(),
  ],
];
/**
 * The data section: one active segment of `size` bytes at `offset`, all 7 but for `words`
 * (address → little-endian u32, cut where the segment ends, as a linker leaves out trailing zeros).
 */
const data = (
  offset: number,
  size: number,
  words: Record<number, number> = {},
): [number, number[]] => {
  const bytes = Array<number>(size).fill(7);
  for (const [address, value] of Object.entries(words))
    for (let i = 0; i < 4; i++) {
      const at = Number(address) - offset + i;
      if (at < size) bytes[at] = (value >>> (8 * i)) & 0xff;
    }
  return [11, [1, 0x00, 0x41, ...sleb(offset), 0x0b, ...uleb(size), ...bytes]];
};
const TOP = 5 * MiB + 4096;

describe("the QuickJS build's memory layout", () => {
  it('is the stack of 5 MiB between the static data and the heap', () => {
    const { stackLow, stackTop } = quickjsLayout();
    expect(stackTop - stackLow).toBe(5 * MiB);
    // What is copied besides the heap: the static part, under a megabyte.
    expect(stackLow).toBeGreaterThan(0);
    expect(stackLow).toBeLessThan(MiB);
  });

  it('is read from the stack pointer and the data segments', () => {
    expect(readLayout(wasm(globals(TOP), data(1024, 100, { 1032: TOP })))).toEqual({
      stackLow: 4096,
      stackTop: TOP,
      breakAddress: 1032,
    });
    // The word's last byte, a zero, left out of the segment.
    expect(readLayout(wasm(globals(TOP), data(1024, 11, { 1032: TOP }))).breakAddress).toBe(1032);
  });

  it("keeps the heap's break in its static data", () => {
    const { breakAddress, stackLow } = quickjsLayout();
    expect(breakAddress % 4).toBe(0);
    expect(breakAddress).toBeGreaterThan(0);
    expect(breakAddress).toBeLessThan(stackLow);
  });

  it.each([
    ['a second global', wasm(globals(TOP, 2)), /globals other than its stack pointer/],
    ['no stack pointer', wasm(data(1024, 100)), /no stack pointer/],
    [
      'data where the stack would be',
      wasm(globals(TOP), data(4000, 200)),
      /not 5242880 bytes above its data/,
    ],
    [
      "no word of its data that holds the heap's start",
      wasm(globals(TOP), data(1024, 100)),
      /in 0 words, not one/,
    ],
    [
      "two words of its data that hold the heap's start",
      wasm(globals(TOP), data(1024, 100, { 1032: TOP, 1040: TOP })),
      /in 2 words, not one/,
    ],
  ])('is refused for a build with %s', (_what, binary, message) => {
    expect(() => readLayout(binary)).toThrow(message);
  });
});
