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
/** The data section: one active segment of `size` bytes at `offset`. */
const data = (offset: number, size: number): [number, number[]] => [
  11,
  [1, 0x00, 0x41, ...sleb(offset), 0x0b, ...uleb(size), ...Array<number>(size).fill(7)],
];

describe("the QuickJS build's memory layout", () => {
  it('is the stack of 5 MiB between the static data and the heap', () => {
    const { stackLow, stackTop } = quickjsLayout();
    expect(stackTop - stackLow).toBe(5 * MiB);
    // What is copied besides the heap: the static part, under a megabyte.
    expect(stackLow).toBeGreaterThan(0);
    expect(stackLow).toBeLessThan(MiB);
  });

  it('is read from the stack pointer and the data segments', () => {
    expect(readLayout(wasm(globals(5 * MiB + 4096), data(1024, 100)))).toEqual({
      stackLow: 4096,
      stackTop: 5 * MiB + 4096,
    });
  });

  it.each([
    ['a second global', wasm(globals(5 * MiB + 4096, 2)), /globals other than its stack pointer/],
    ['no stack pointer', wasm(data(1024, 100)), /no stack pointer/],
    [
      'data where the stack would be',
      wasm(globals(5 * MiB + 4096), data(4000, 200)),
      /not 5242880 bytes above its data/,
    ],
  ])('is refused for a build with %s', (_what, binary, message) => {
    expect(() => readLayout(binary)).toThrow(message);
  });
});
