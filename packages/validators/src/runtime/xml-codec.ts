/**
 * XML bodies, driven by the generated descriptors: writing (xml-encode.ts) and reading
 * (xml-decode.ts) the same documents.
 */
export { encodeXml, escapeText } from './xml-encode.js';
export { checkWellFormedDocument, checkXmlDocument, decodeXml } from './xml-decode.js';
