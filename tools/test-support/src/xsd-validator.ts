/**
 * The real XSD validator for tests: libxml2 (compiled to WebAssembly) loads
 * schemas/xsd/*.xsd once; each document is validated against the schema of its
 * root element's namespace.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';

export const SCHEMA_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../schemas/xsd');

export interface XsdCheck {
  valid: boolean;
  errors: string[];
}

export class SchemaValidator {
  private readonly byNamespace = new Map<string, XsdValidator>();

  constructor(files: string[] = ['pal.xsd', 'services.xsd']) {
    for (const file of files) {
      const text = readFileSync(resolve(SCHEMA_DIR, file), 'utf8');
      const namespace = /targetNamespace="([^"]+)"/.exec(text)?.[1];
      if (!namespace) throw new Error(`${file} has no targetNamespace`);
      const xsd = XmlDocument.fromString(text);
      try {
        this.byNamespace.set(namespace, XsdValidator.fromDoc(xsd));
      } finally {
        xsd.dispose();
      }
    }
  }

  get namespaces(): string[] {
    return [...this.byNamespace.keys()];
  }

  check(xml: string): XsdCheck {
    let doc: XmlDocument;
    try {
      doc = XmlDocument.fromString(xml);
    } catch (e) {
      return { valid: false, errors: [`not well-formed: ${(e as Error).message}`] };
    }
    try {
      const namespace = doc.root.namespaceUri;
      const validator = this.byNamespace.get(namespace);
      if (!validator) return { valid: false, errors: [`no schema for namespace "${namespace}"`] };
      validator.validate(doc);
      return { valid: true, errors: [] };
    } catch (e) {
      const details = (e as { details?: { message: string; line?: number }[] }).details;
      return {
        valid: false,
        errors: details?.length
          ? details.map((d) => `line ${d.line}: ${d.message.trim()}`)
          : [(e as Error).message],
      };
    } finally {
      doc.dispose();
    }
  }

  /** Throws with every libxml2 message when the document is not valid. */
  assertValid(xml: string): void {
    const result = this.check(xml);
    if (!result.valid)
      throw new Error(
        `XML is not valid against the XSDs:\n${result.errors.join('\n')}\n${xml.slice(0, 2000)}`,
      );
  }

  dispose(): void {
    for (const v of this.byNamespace.values()) v.dispose();
    this.byNamespace.clear();
  }
}
