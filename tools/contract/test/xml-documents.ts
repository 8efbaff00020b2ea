/**
 * fast-check documents of one version of the schemas, written as the wire format has them (root
 * in its namespace, members unqualified, lists repeated, maps as `entry`, `xsi:nil`), and the
 * real XSD validator (libxml2) over the XSD files of a version. Built from the generator's schema
 * model, as packages/validators' arbitraries are built from its descriptors, so any fixture pair
 * of schemas gets documents without generating packages first.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';
import type { MemberModel, SchemaModel, TypeRef } from '@pal-workflow/codegen';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');

/** Strings XML can carry. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => s.replace(/[^\t\n\u0020-\uD7FF\uE000-\uFFFD]/g, '')),
  fc.constantFrom('', 'a & b < c', 'ünïcødé'),
);

export class DocumentArbitraries {
  private readonly types;
  constructor(private readonly model: SchemaModel) {
    this.types = new Map(model.types.map((t) => [t.name, t]));
  }

  /** The content of an element of type `ref` (text, or child elements). */
  private content(ref: TypeRef, depth: number): fc.Arbitrary<string> {
    if (ref.kind === 'builtin')
      switch (ref.name) {
        case 'string':
          return text.map(escape);
        case 'boolean':
          return fc.boolean().map(String);
        case 'int':
          return fc.integer({ min: -2147483648, max: 2147483647 }).map(String);
        case 'unsignedShort':
          return fc.integer({ min: 0, max: 65535 }).map(String);
        case 'base64Binary':
          return fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString('base64'));
      }
    const t = this.types.get(ref.name);
    if (!t) throw new Error(`unknown type ${ref.name}`);
    // Deep trees add nothing to the proof: past a depth, leave optional content out.
    const max = depth > 3 ? 0 : 2;
    switch (t.kind) {
      case 'enum':
        return fc.constantFrom(...t.values);
      case 'array':
        return fc
          .array(this.element(t.itemElement, t.item, depth + 1), { maxLength: max })
          .map((xs) => xs.join(''));
      case 'map':
        return fc
          .array(
            fc
              .tuple(text, this.content(t.value, depth + 1))
              .map(([k, v]) => `<entry><key>${escape(k)}</key><value>${v}</value></entry>`),
            { maxLength: max },
          )
          .map((xs) => xs.join(''));
      case 'object':
        return fc
          .tuple(...t.members.map((m) => this.member(m, depth, max)))
          .map((xs) => xs.join(''));
    }
  }

  private element(name: string, ref: TypeRef, depth: number): fc.Arbitrary<string> {
    return this.content(ref, depth).map((c) => `<${name}>${c}</${name}>`);
  }

  private member(m: MemberModel, depth: number, max: number): fc.Arbitrary<string> {
    let one = this.element(m.name, m.type, depth + 1);
    if (m.nillable) one = fc.oneof(one, fc.constant(`<${m.name} xsi:nil="true"/>`));
    const min = m.optional ? 0 : 1;
    const count = m.list ? Math.max(min, max) : 1;
    if (count === 0 || (!m.list && m.optional && max === 0)) return fc.constant('');
    return fc.array(one, { minLength: min, maxLength: count }).map((xs) => xs.join(''));
  }

  /** Whole documents of a root element. */
  document(root: string): fc.Arbitrary<string> {
    const r = this.model.roots.find((x) => x.name === root);
    if (!r) throw new Error(`no root element ${root}`);
    const prefix = this.model.files.find((f) => f.namespace === r.namespace)?.prefix ?? 'ns';
    return this.content(r.type, 0).map(
      (c) =>
        `<?xml version="1.0" encoding="UTF-8"?><${prefix}:${root} xmlns:${prefix}="${r.namespace}" xmlns:xsi="${XSI}">${c}</${prefix}:${root}>`,
    );
  }
}

/** libxml2 over every XSD of one version, chosen by the root's namespace. */
export class VersionValidator {
  private readonly byNamespace = new Map<string, XsdValidator>();
  constructor(root: string, files: string[]) {
    for (const file of files) {
      const source = readFileSync(join(root, file), 'utf8');
      const namespace = /targetNamespace="([^"]+)"/.exec(source)?.[1] ?? '';
      const doc = XmlDocument.fromString(source);
      try {
        this.byNamespace.set(namespace, XsdValidator.fromDoc(doc));
      } finally {
        doc.dispose();
      }
    }
  }

  valid(xml: string): boolean {
    const doc = XmlDocument.fromString(xml);
    try {
      const validator = this.byNamespace.get(doc.root.namespaceUri);
      if (!validator) return false;
      validator.validate(doc);
      return true;
    } catch {
      return false;
    } finally {
      doc.dispose();
    }
  }

  dispose(): void {
    for (const v of this.byNamespace.values()) v.dispose();
  }
}
