import { z } from 'zod';
import { xsBase64Binary, xsString } from './xsd-builtins.js';

const BUILTINS: Record<string, z.ZodType> = {
  'xs:string': xsString,
  'xs:boolean': z.boolean(),
  'xs:int': z.int32(),
  'xs:unsignedShort': z.int().min(0).max(65535),
  'xs:base64Binary': xsBase64Binary,
};

export function builtinSchema(name: string): z.ZodType {
  const schema = BUILTINS[name];
  if (!schema) throw new Error(`unknown XSD built-in ${name}`);
  return schema;
}
