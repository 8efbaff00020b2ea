// Where the QuickJS build keeps its state in WASM memory, read from its binary: what a sandbox
// must write back to be the same as when it was built (sandbox.ts, "the built state").
//
// Emscripten lays the memory out as [static data and zeroed globals][C stack][heap]. The stack
// grows down from its top, which is the initial value of the module's one global, the stack
// pointer; the heap starts there. Between calls into the module the stack holds nothing live
// (every call has returned), so a written-back state is the static part and the heap.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The build's C stack (quickjs-emscripten 0.32's RELEASE_SYNC: `-sSTACK_SIZE=5MB`). */
const STACK_BYTES = 5 * 1024 * 1024;

export interface WasmLayout {
  /** Where the static data and zeroed globals end and the stack's lowest byte is. */
  stackLow: number;
  /** The stack's top, where the heap begins. */
  stackTop: number;
  /**
   * Where the static data holds the heap's break, the end of what the allocator has taken
   * (emscripten's `sbrk`): nothing was written on the heap past it. Found as the one word of the
   * data segments whose first value is the heap's start.
   */
  breakAddress: number;
}

let layout: WasmLayout | undefined;

/** The layout of the build quickjs-emscripten's RELEASE_SYNC variant loads. */
export function quickjsLayout(): WasmLayout {
  layout ??= readLayout(
    readFileSync(
      createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'),
    ),
  );
  return layout;
}

/**
 * The stack's bounds in a module built by emscripten: its only global is the stack pointer, and
 * its data segments end below the stack; and where its break is kept. Throws for a build that is
 * laid out otherwise, so that a changed dependency fails loudly instead of leaving state behind.
 */
export function readLayout(binary: Uint8Array): WasmLayout {
  let stackTop: number | undefined;
  let dataEnd = 0;
  const segments: { offset: number; bytes: Uint8Array }[] = [];
  forEachSection(binary, (id, read) => {
    if (id === 6) {
      const count = read.u32();
      // i32, mutable, `i32.const <top>`, end: the stack pointer and nothing else.
      const [type, mutable, opcode] = [read.byte(), read.byte(), read.byte()];
      if (count !== 1 || type !== 0x7f || mutable !== 1 || opcode !== 0x41)
        throw new Error('the QuickJS build has globals other than its stack pointer');
      stackTop = read.s32();
    }
    if (id === 11) {
      const count = read.u32();
      for (let i = 0; i < count; i++) {
        const kind = read.u32();
        if (kind !== 0 || read.byte() !== 0x41)
          throw new Error('the QuickJS build has a data segment without a fixed offset');
        const offset = read.s32();
        read.byte(); // end of the offset expression
        const size = read.u32();
        segments.push({ offset, bytes: read.bytes(size) });
        dataEnd = Math.max(dataEnd, offset + size);
      }
    }
  });
  if (stackTop === undefined) throw new Error('the QuickJS build has no stack pointer');
  const stackLow = stackTop - STACK_BYTES;
  if (stackLow < dataEnd)
    throw new Error(`the QuickJS build's stack is not ${STACK_BYTES} bytes above its data`);
  // The static data as the module starts with it (a segment leaves out its trailing zeros).
  const data = new Uint8Array(dataEnd + 4);
  for (const { offset, bytes } of segments) data.set(bytes, offset);
  const words = new DataView(data.buffer);
  const breakAddresses: number[] = [];
  for (let at = 0; at + 4 <= data.length; at += 4)
    if (words.getUint32(at, true) === stackTop) breakAddresses.push(at);
  if (breakAddresses.length !== 1)
    throw new Error(
      `the QuickJS build's data holds the heap's start in ${breakAddresses.length} words, not one`,
    );
  return { stackLow, stackTop, breakAddress: breakAddresses[0]! };
}

interface Reader {
  byte(): number;
  u32(): number;
  s32(): number;
  bytes(count: number): Uint8Array;
}

function forEachSection(binary: Uint8Array, visit: (id: number, read: Reader) => void): void {
  let at = 8; // magic and version
  const read: Reader = {
    byte: () => binary[at++]!,
    u32: () => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = binary[at++]!;
        value += (byte & 0x7f) * 2 ** shift;
        if ((byte & 0x80) === 0) return value;
      }
    },
    s32: () => {
      let value = 0;
      let shift = 0;
      let byte: number;
      do {
        byte = binary[at++]!;
        value |= (byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      return shift < 32 && byte & 0x40 ? value | (-1 << shift) : value;
    },
    bytes: (count) => binary.subarray(at, (at += count)),
  };
  while (at < binary.length) {
    const id = read.byte();
    const size = read.u32();
    const end = at + size;
    visit(id, read);
    at = end;
  }
}
