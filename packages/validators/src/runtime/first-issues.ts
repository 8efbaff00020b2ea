/**
 * The first problems of a large value, found without validating all of it. zod names every
 * problem it meets: a body of 300,000 wrong items (6 MB, within the body limit) took a second and
 * 400 MB of heap to describe, and the node kept the memory. This walk goes where zod would, item
 * by item, and stops once it has found enough; leaves are left to zod itself, so the messages are
 * zod's own.
 */
import { z } from 'zod';

export interface FoundIssue {
  path: (string | number)[];
  message: string;
}

/** Up to `max` problems of `value` against `schema`; none when it fits (as far as walked). */
export function firstIssues(schema: z.ZodType, value: unknown, max: number): FoundIssue[] {
  const found: FoundIssue[] = [];
  const full = () => found.length >= max;

  const leaf = (schema: z.ZodType, value: unknown, path: (string | number)[]): void => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      if (full()) return;
      // A member left out reaches here as `undefined` (walk reads every key of the shape).
      const missing =
        value === undefined && issue.code === 'invalid_type' && issue.path.length === 0;
      found.push({
        path: [...path, ...(issue.path as (string | number)[])],
        message: missing ? 'required' : issue.message,
      });
    }
  };

  const walk = (schema: z.ZodType, value: unknown, path: (string | number)[]): void => {
    if (full()) return;
    if (schema instanceof z.ZodOptional && value === undefined) return;
    if (schema instanceof z.ZodNullable && value === null) return;
    if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable)
      return walk(schema.unwrap() as z.ZodType, value, path);
    if (schema instanceof z.ZodArray && Array.isArray(value)) {
      const element = schema.element as z.ZodType;
      for (let i = 0; i < value.length && !full(); i++) walk(element, value[i], [...path, i]);
      return;
    }
    if (schema instanceof z.ZodObject && isPlainObject(value)) {
      const shape = schema.shape as Record<string, z.ZodType>;
      for (const key of Object.keys(shape)) walk(shape[key]!, value[key], [...path, key]);
      if (schema.def.catchall instanceof z.ZodNever && !full()) {
        // zod's own words for the keys a strict object does not know, all in one problem.
        const unknown = Object.keys(value).filter((key) => !Object.hasOwn(shape, key));
        if (unknown.length > 0)
          leaf(z.strictObject({}), Object.fromEntries(unknown.map((k) => [k, null])), path);
      }
      return;
    }
    if (schema instanceof z.ZodRecord && isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (full()) return;
        leaf(schema.keyType as z.ZodType, key, [...path, key]);
        walk(schema.valueType as z.ZodType, item, [...path, key]);
      }
      return;
    }
    leaf(schema, value, path);
  };

  walk(schema, value, []);
  return found;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
