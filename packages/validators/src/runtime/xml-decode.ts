/**
 * Reading XML bodies by the generated descriptors. Decoding refuses DOCTYPEs (so no entity is
 * ever expanded), reports every problem with its path, then validates with zod.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  rootElements,
  typeDescriptors,
  type RootName,
  type RootValues,
  type TypeName,
} from '../generated/descriptors.gen.js';
import { DecodeError, IssueList, type DecodeIssue } from './decode-error.js';
import type { MemberDescriptor, TypeDescriptor } from './descriptor.js';
import { LARGE_BODY_CHARS, validateRoot } from './json-codec.js';
import { isXmlText } from './xsd-builtins.js';

type XmlNode = Record<string, unknown>;

/** Deeper than any document of the schemas; fast-xml-parser stops at it too. */
const MAX_DEPTH = 100;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  alwaysCreateTextNode: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Entities are decoded by decodeEntities below: the parser's own handling skips
  // character references such as &#13;.
  processEntities: false,
  htmlEntities: false,
  isArray: (_name, _jpath, _isLeaf, isAttribute) => !isAttribute,
  maxNestedTags: MAX_DEPTH,
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The five predefined entities and character references; DOCTYPEs are refused, so there are no others. */
function decodeEntities(
  text: string,
  characters: 'refuse characters XML cannot carry' | 'any character' = 'any character',
): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][\w.-]*);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref.startsWith('#x') ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (
        !(code <= 0x10ffff) ||
        (characters === 'refuse characters XML cannot carry' &&
          !isXmlText(String.fromCodePoint(code)))
      )
        throw new DecodeError([{ path: '', message: `invalid character reference ${whole}` }]);
      return String.fromCodePoint(code);
    }
    const value = PREDEFINED[ref];
    if (value === undefined)
      throw new DecodeError([{ path: '', message: `unknown entity ${whole}` }]);
    return value;
  });
}

const DOCTYPE = /<!DOCTYPE|<!ENTITY/i;

/**
 * Refuses what no document of this service may hold, before anything is built from it: a DOCTYPE
 * (so no entity is ever expanded) and XML that is not well formed.
 */
export function checkXmlDocument(text: string): void {
  if (DOCTYPE.test(text))
    throw new DecodeError([{ path: '', message: 'a DOCTYPE is not allowed' }]);
  const wellFormed = XMLValidator.validate(text);
  if (wellFormed !== true) {
    const { msg, line, col } = wellFormed.err;
    const unclosed = unclosedTags(msg);
    throw new DecodeError([
      {
        path: '',
        message: unclosed
          ? `malformed XML: the document ends with ${unclosed} still open`
          : `malformed XML at line ${line}, column ${col}: ${msg}`,
      },
    ]);
  }
}

/**
 * The elements fast-xml-parser's check found open at the end, which it reports as their names in
 * JSON ("Invalid '[ "a", "b" ]' found.", at line 1, column 1): `<a>, <b>`; undefined for another
 * message.
 */
function unclosedTags(message: string): string | undefined {
  const listed = /^Invalid '(\[[\s\S]*\])' found\.$/.exec(message)?.[1];
  if (listed === undefined) return undefined;
  try {
    const names = JSON.parse(listed) as unknown;
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) return undefined;
    return names.map((n) => `<${n}>`).join(', ');
  } catch {
    return undefined;
  }
}

/**
 * A document taken as it is (C5): what checkXmlDocument checks, and what the parser's own check
 * lets through: exactly one root element and no text outside it, only characters XML allows
 * (`&#0;` and a raw NUL alike), `&` only in the five predefined references and character
 * references, no `<` in an attribute's value nor `]]>` in text, and every prefix a QName of one
 * colon, declared (not to "") where it is used. Read token by token from left to right (any
 * element name is data here, `<__proto__>` too), so that its time grows with its length only.
 */
export function checkWellFormedDocument(text: string): void {
  checkXmlDocument(text);
  const refuse = (message: string): never => {
    throw new DecodeError([{ path: '', message }]);
  };
  if (!isXmlText(text)) refuse('the document holds a character XML cannot carry');
  // XML's white space is these four, not JavaScript's \s (which takes U+00A0, U+3000 and more).
  const token =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)([^ \t\r\n/>!?]+)|[^<]+/y;
  // An element's attributes one by one from where its name ends (not one repeated group, whose
  // backtracking overflows V8's stack past some 800,000 attributes), then its end.
  const attribute = /[ \t\r\n]+([^ \t\r\n=/>]+)[ \t\r\n]*=[ \t\r\n]*(?:"([^"]*)"|'([^']*)')/y;
  const tagEnd = /[ \t\r\n]*(\/?)>/y;
  /** How many open elements declare each prefix; "xml" and "xmlns" are always bound. */
  const bound = new Map<string, number>([
    ['xml', 1],
    ['xmlns', 1],
  ]);
  const open: { name: string; declared: string[] }[] = [];
  let roots = 0;
  const checkName = (qname: string) => {
    const parts = qname.split(':');
    if (parts.length > 2 || parts.some((part) => part === ''))
      refuse(`<${qname}> is not a name of at most one prefix`);
    if (parts.length === 2 && !bound.get(parts[0]!))
      refuse(`the prefix of <${qname}> is not declared (xmlns:${parts[0]})`);
  };
  const checkText = (value: string) => {
    const left = value.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][\w.-]*);/g, (whole) => {
      decodeEntities(whole, 'refuse characters XML cannot carry');
      return '';
    });
    if (left.includes('&')) refuse('an & that begins no entity or character reference');
  };
  token.lastIndex = text.startsWith('\ufeff') ? 1 : 0; // a byte order mark is no text
  while (token.lastIndex < text.length) {
    const at = token.lastIndex;
    const match = token.exec(text);
    if (!match) refuse(`malformed XML at character ${at}`);
    const [whole, closing, name] = match!;
    if (whole.startsWith('<!--') || whole.startsWith('<?')) continue;
    if (whole.startsWith('<![CDATA[')) {
      if (open.length === 0) refuse('text outside the root element');
      continue;
    }
    if (name === undefined) {
      if (open.length === 0) {
        if (/[^ \t\r\n]/.test(whole)) refuse('text outside the root element');
        continue;
      }
      if (whole.includes(']]>')) refuse('"]]>" in text');
      checkText(whole);
      continue;
    }
    const found: RegExpExecArray[] = [];
    let after = token.lastIndex;
    if (!closing) {
      attribute.lastIndex = after;
      // A failed sticky match sets lastIndex back to 0: the end of the last one is kept apart.
      for (let next = attribute.exec(text); next; next = attribute.exec(text)) {
        found.push(next);
        after = attribute.lastIndex;
      }
    }
    tagEnd.lastIndex = after;
    const end = tagEnd.exec(text);
    if (!end || (closing && end[1])) refuse(`malformed XML at character ${at}`);
    token.lastIndex = tagEnd.lastIndex;
    const empty = end![1];
    if (closing) {
      const element = open.pop();
      if (element?.name !== name) refuse(`</${name}> closes no open <${name}>`);
      for (const prefix of element!.declared) bound.set(prefix, bound.get(prefix)! - 1);
      continue;
    }
    if (open.length === 0 && ++roots > 1) refuse('the document must have exactly one root element');
    const declared: string[] = [];
    for (const [, qname, double, single] of found) {
      const value = double ?? single ?? '';
      if (value.includes('<')) refuse(`a < in the value of ${qname}`);
      checkText(value);
      if (qname!.startsWith('xmlns:')) {
        const prefix = qname!.slice('xmlns:'.length);
        if (value === '') refuse(`the prefix ${prefix} is declared empty`);
        if (prefix === 'xmlns' || prefix === 'xml') refuse(`the prefix ${prefix} is reserved`);
        declared.push(prefix);
        bound.set(prefix, (bound.get(prefix) ?? 0) + 1);
      }
    }
    if (name!.startsWith('xmlns:')) refuse(`<${name}>: the prefix xmlns names no element`);
    checkName(name!);
    for (const [, qname] of found)
      if (qname !== 'xmlns' && !qname!.startsWith('xmlns:')) checkName(qname!);
    if (empty) for (const prefix of declared) bound.set(prefix, bound.get(prefix)! - 1);
    else open.push({ name: name!, declared });
  }
  if (roots === 0) refuse('the document must have exactly one root element');
}

/** fast-xml-parser throws plain Errors for documents it will not build: they are bad input. */
function parseChecked(text: string): XmlNode {
  try {
    return parser.parse(text) as XmlNode;
  } catch (error) {
    const message = (error as Error).message;
    if (/Maximum nested tags/i.test(message))
      throw new DecodeError([
        { path: '', message: `elements are nested deeper than ${MAX_DEPTH} levels` },
      ]);
    const reserved = /Invalid name: "([^"]*)"/.exec(message);
    if (reserved) throw new DecodeError([{ path: '', message: `unknown member <${reserved[1]}>` }]);
    throw new DecodeError([{ path: '', message: `malformed XML: ${message}` }]);
  }
}

/**
 * Reads an XML document. When `expected` is given the root must be that element;
 * otherwise any global element is accepted and returned with its name.
 */
export function decodeXml<R extends RootName>(text: string, expected: R): RootValues[R];
export function decodeXml(text: string): { root: RootName; value: unknown };
export function decodeXml(text: string, expected?: RootName): unknown {
  // The parser's own check misses text after a root written `<r/>` and drops it unread.
  checkWellFormedDocument(text);
  const doc = parseChecked(text);
  const tops = Object.keys(doc).filter((k) => !k.startsWith('?') && k !== '#text');
  if (tops.length !== 1 || (doc[tops[0]!] as unknown[]).length !== 1)
    throw new DecodeError([
      { path: '', message: 'the document must have exactly one root element' },
    ]);
  const qname = tops[0]!;
  const node = (doc[qname] as XmlNode[])[0]!;
  const local = localName(qname);
  const prefix = qname.includes(':') ? qname.slice(0, qname.indexOf(':')) : '';
  const namespace = String(node[prefix ? `@_xmlns:${prefix}` : '@_xmlns'] ?? '');
  if (!(local in rootElements) || (expected && local !== expected)) {
    const want = expected ? `<${expected}>` : `one of ${Object.keys(rootElements).join(', ')}`;
    throw new DecodeError([
      { path: '', message: `unexpected root element <${qname}>: expected ${want}` },
    ]);
  }
  const root = local as RootName;
  const descriptor = rootElements[root];
  if (namespace !== descriptor.namespace)
    throw new DecodeError([
      {
        path: root,
        message: `the root element must be in namespace ${descriptor.namespace}, not "${namespace}"`,
      },
    ]);
  const issues: DecodeIssue[] = new IssueList();
  // A default namespace declared on the root (`<consoleContent xmlns="urn:…">`) puts its
  // unprefixed members in that namespace too, where the schema has them in none.
  const value = readContent(descriptor.type, node, root, issues, String(node['@_xmlns'] ?? ''));
  if (issues.length) throw new DecodeError(issues);
  const valid = validateRoot(root, value, text.length > LARGE_BODY_CHARS);
  return expected ? valid : { root, value: valid };
}

/**
 * `defaultNamespace`: the default namespace the node's children are in unless they declare one
 * (the root's; below the root it is "", since a member that declares another is refused).
 */
function readContent(
  type: string,
  node: XmlNode,
  path: string,
  issues: DecodeIssue[],
  defaultNamespace = '',
): unknown {
  if (type.startsWith('xs:')) {
    checkOnlyText(node, path, issues);
    return readBuiltin(type, textOf(node), path, issues);
  }
  const d: TypeDescriptor = typeDescriptors[type as TypeName];
  switch (d.kind) {
    case 'enum':
      checkOnlyText(node, path, issues);
      return textOf(node).trim();
    case 'array': {
      checkChildren(node, [d.itemElement], path, issues, defaultNamespace);
      return children(node, d.itemElement).map((c, i) =>
        readElement(d.item, c, `${path}.${d.itemElement}[${i}]`, false, issues),
      );
    }
    case 'map': {
      checkChildren(node, ['entry'], path, issues, defaultNamespace);
      const out: Record<string, unknown> = {};
      children(node, 'entry').forEach((entry, i) => {
        const at = `${path}.entry[${i}]`;
        checkChildren(entry, ['key', 'value'], at, issues);
        const keys = children(entry, 'key');
        const values = children(entry, 'value');
        if (keys.length !== 1 || values.length !== 1) {
          issues.push({ path: at, message: 'an entry needs exactly one <key> and one <value>' });
          return;
        }
        const key = textOf(keys[0]!);
        if (key === '__proto__')
          issues.push({ path: at, message: 'the map key "__proto__" is reserved' });
        else if (Object.hasOwn(out, key))
          issues.push({ path: at, message: `duplicate key "${key}"` });
        // defineProperty: a key such as "__proto__" is data, never the prototype.
        const value = readElement(d.value, values[0]!, `${path}["${key}"]`, false, issues);
        Object.defineProperty(out, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      });
      return out;
    }
    case 'object': {
      checkChildren(
        node,
        d.members.map((m) => m.name),
        path,
        issues,
        defaultNamespace,
      );
      const out: Record<string, unknown> = {};
      for (const m of d.members) {
        const found = children(node, m.name);
        if (found.length === 0) continue;
        out[m.name] = readMember(m, found, `${path}.${m.name}`, issues);
      }
      return out;
    }
  }
}

function readMember(
  m: MemberDescriptor,
  found: XmlNode[],
  path: string,
  issues: DecodeIssue[],
): unknown {
  if (m.list)
    return found.map((c, i) => readElement(m.type, c, `${path}[${i}]`, m.nillable, issues));
  if (found.length > 1)
    issues.push({ path, message: `must occur at most once, found ${found.length}` });
  return readElement(m.type, found[0]!, path, m.nillable, issues);
}

function readElement(
  type: string,
  node: XmlNode,
  path: string,
  nillable: boolean,
  issues: DecodeIssue[],
): unknown {
  const nil = Object.entries(node).find(
    ([k]) => k.startsWith('@_') && localName(k.slice(2)) === 'nil',
  );
  if (nil && (nil[1] === 'true' || nil[1] === '1')) {
    if (!nillable) issues.push({ path, message: 'is not nillable' });
    return null;
  }
  return readContent(type, node, path, issues);
}

function readBuiltin(type: string, text: string, path: string, issues: DecodeIssue[]): unknown {
  switch (type) {
    case 'xs:boolean': {
      const t = text.trim();
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      issues.push({ path, message: `expected a boolean (true or false), got "${text}"` });
      return undefined;
    }
    case 'xs:int':
    case 'xs:unsignedShort': {
      const t = text.trim();
      if (!/^[+-]?\d+$/.test(t)) {
        issues.push({ path, message: `expected an integer, got "${text}"` });
        return undefined;
      }
      return Number(t);
    }
    case 'xs:base64Binary':
      return text.replace(/\s+/g, '');
    default:
      return text;
  }
}

function checkChildren(
  node: XmlNode,
  allowed: readonly string[],
  path: string,
  issues: DecodeIssue[],
  defaultNamespace = '',
): void {
  for (const key of Object.keys(node)) {
    if (key === '#text') {
      const text = textOf(node);
      if (text.trim())
        issues.push({ path, message: `unexpected text "${text.trim().slice(0, 40)}"` });
    } else if (key.startsWith('@_')) {
      checkAttribute(key.slice(2), path, issues);
    } else if (key.includes(':')) {
      issues.push({
        path: `${path}.${key}`,
        message: 'members are unqualified: remove the namespace prefix',
      });
    } else if (!allowed.includes(key)) {
      issues.push({ path: `${path}.${key}`, message: 'unknown member' });
    } else {
      const member = children(node, key).find((child) =>
        child['@_xmlns'] === undefined ? defaultNamespace !== '' : child['@_xmlns'] !== '',
      );
      if (member)
        issues.push({
          path: `${path}.${key}`,
          message: `members are unqualified: <${key}> is in the namespace ${String(member['@_xmlns'] ?? defaultNamespace)} (a default xmlns); declare the root's namespace with a prefix, or xmlns="" on the member`,
        });
    }
  }
}

function checkOnlyText(node: XmlNode, path: string, issues: DecodeIssue[]): void {
  for (const key of Object.keys(node)) {
    if (key === '#text') continue;
    if (key.startsWith('@_')) checkAttribute(key.slice(2), path, issues);
    else issues.push({ path: `${path}.${key}`, message: 'a simple value cannot contain elements' });
  }
}

function checkAttribute(name: string, path: string, issues: DecodeIssue[]): void {
  // Namespace declarations and the xsi attributes (nil, type, schemaLocation) are allowed anywhere.
  if (name === 'xmlns' || name.startsWith('xmlns:') || name.startsWith('xsi:')) return;
  issues.push({ path, message: `unexpected attribute ${name}` });
}

function children(node: XmlNode, name: string): XmlNode[] {
  return (node[name] as XmlNode[] | undefined) ?? [];
}

function textOf(node: XmlNode): string {
  const t = node['#text'];
  return decodeEntities(Array.isArray(t) ? t.join('') : t === undefined ? '' : String(t));
}

function localName(qname: string): string {
  return qname.includes(':') ? qname.slice(qname.indexOf(':') + 1) : qname;
}
