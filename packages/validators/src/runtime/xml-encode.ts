/**
 * Writing XML bodies from the generated descriptors: roots in their type's namespace, unqualified
 * members in schema order, repeated elements for lists, `entry` maps, `xsi:nil` and base64 text.
 */
import {
  rootElements,
  typeDescriptors,
  type RootName,
  type RootValues,
  type TypeName,
} from '../generated/descriptors.gen.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

/** Writes a value as an XML document whose root is the given global element. */
export function encodeXml<R extends RootName>(root: R, value: RootValues[R]): string {
  const { namespace, prefix, type } = rootElements[root];
  const state = { nil: false };
  const body = writerOf(type)(value, state);
  const xsi = state.nil ? ` xmlns:xsi="${XSI}"` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${prefix}:${root} xmlns:${prefix}="${namespace}"${xsi}>${body}</${prefix}:${root}>`;
}

/** Writes the content of one element of a type (its text, or its members). */
type Writer = (value: unknown, state: { nil: boolean }) => string;

// Each type's descriptor is turned into a writer once, so encoding walks no descriptors.
const writers = new Map<string, Writer>();

function writerOf(type: string): Writer {
  let writer = writers.get(type);
  if (!writer) writers.set(type, (writer = buildWriter(type)));
  return writer;
}

function buildWriter(type: string): Writer {
  switch (type) {
    case 'xs:boolean':
      return (value) => (value ? 'true' : 'false');
    case 'xs:int':
    case 'xs:unsignedShort':
      return (value) => String(value);
    case 'xs:string':
    case 'xs:base64Binary':
      return (value) => escapeText(String(value));
  }
  const d = typeDescriptors[type as TypeName];
  switch (d.kind) {
    case 'enum':
      return (value) => escapeText(String(value));
    case 'array': {
      const item = elementWriter(d.itemElement, d.item, false);
      return (value, state) => {
        let out = '';
        for (const v of value as unknown[]) out += item(v, state);
        return out;
      };
    }
    case 'map': {
      const entryValue = elementWriter('value', d.value, false);
      return (value, state) => {
        let out = '';
        for (const [k, v] of Object.entries(value as Record<string, unknown>))
          out += `<entry><key>${escapeText(k)}</key>${entryValue(v, state)}</entry>`;
        return out;
      };
    }
    case 'object': {
      const members = d.members.map((m) => ({
        name: m.name,
        list: m.list,
        write: elementWriter(m.name, m.type, m.nillable),
      }));
      return (value, state) => {
        let out = '';
        const obj = value as Record<string, unknown>;
        for (const m of members) {
          const v = obj[m.name];
          if (v === undefined) continue;
          if (m.list) for (const item of v as unknown[]) out += m.write(item, state);
          else out += m.write(v, state);
        }
        return out;
      };
    }
  }
}

/**
 * Writes one element: `<name>content</name>`, or `<name xsi:nil="true"/>` for a nillable null.
 * Its content writer is looked up on first use, so types may refer to each other in any order.
 */
function elementWriter(name: string, type: string, nillable: boolean): Writer {
  const open = `<${name}>`;
  const close = `</${name}>`;
  const nil = `<${name} xsi:nil="true"/>`;
  let content: Writer | undefined;
  return (value, state) => {
    if (value === null && nillable) {
      state.nil = true;
      return nil;
    }
    content ??= writerOf(type);
    return open + content(value, state) + close;
  };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };

// What XML 1.0 cannot carry at all (its Char production): C0 controls but tab, LF and CR, U+FFFE,
// U+FFFF and lone surrogates. Inputs are refused when they hold one (xsString, the parameters),
// but a value may still come from elsewhere (a workflow's output, a stored text): it is written as
// U+FFFD, so that every XML answer stays one a parser reads. JSON carries such a value as it is.
const NEEDS_ESCAPE = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\ud800-\udfff]/u;
const TO_ESCAPE = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\ud800-\udfff]/gu;

/** Escapes text content; CR is written as a reference so that parsers do not normalise it away. */
export function escapeText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(TO_ESCAPE, (c) => ESCAPES[c] ?? '\ufffd') : text;
}
