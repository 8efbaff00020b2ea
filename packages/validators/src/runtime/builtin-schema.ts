import type { z } from 'zod';
import { xsBase64Binary, xsBoolean, xsInt, xsString, xsUnsignedShort } from './xsd-builtins.js';

const BUILTINS: Record<string, z.ZodType> = {
  'xs:string': xsString,
  'xs:boolean': xsBoolean,
  'xs:int': xsInt,
  'xs:unsignedShort': xsUnsignedShort,
  'xs:base64Binary': xsBase64Binary,
};

export function builtinSchema(name: string): z.ZodType {
  const schema = BUILTINS[name];
  if (!schema) throw new Error(`unknown XSD built-in ${name}`);
  return schema;
}
