/** The shape of the generated route table (../generated/operations.gen.ts). */
import type { RootName } from '@pal-workflow/validators';

export type ScalarType = 'string' | 'boolean' | 'int';

export interface ParamSpec {
  readonly name: string;
  readonly type: ScalarType;
  readonly required: boolean;
  /** Longest accepted string value (the OpenAPI parameter's maxLength). */
  readonly maxLength?: number;
  /** The only accepted values (the OpenAPI parameter's enum). */
  readonly enum?: readonly string[];
}

export type ResponseSpec =
  | { readonly kind: 'simple'; readonly root: 'string' | 'boolean' | 'int' }
  | { readonly kind: 'object'; readonly root: RootName }
  | { readonly kind: 'list'; readonly root: RootName; readonly totalCount: boolean };

export interface OperationSpec {
  readonly id: string;
  readonly specId: string;
  readonly method: 'GET' | 'POST';
  readonly root: 'service' | 'user';
  /** Fastify path after the root, e.g. `/rest/pals/:id`. */
  readonly path: string;
  readonly pathParams: readonly ParamSpec[];
  readonly queryParams: readonly ParamSpec[];
  readonly search?: { readonly type: string; readonly headers: readonly ParamSpec[] };
  /**
   * Headers the server reads around the operation, not the handler (`x-transport` in the
   * OpenAPI): Idempotency-Key. Not part of the operation's input.
   */
  readonly transportHeaders?: readonly ParamSpec[];
  readonly form?: { readonly fields: readonly ParamSpec[] };
  readonly body?:
    | { readonly kind: 'typed'; readonly root: RootName; readonly required: boolean }
    | { readonly kind: 'any'; readonly required: boolean };
  readonly response: ResponseSpec;
}

/**
 * A list answer with the number of all matches, sent as `X-Total-Count`. A search may stop
 * counting at a cap: then `total` is the cap, `totalRelation` is `gte` and the answer says so in
 * `X-Total-Count-Relation: gte` (absent: the count is exact).
 */
export interface Page<T> {
  items: T[];
  total: number;
  totalRelation?: 'eq' | 'gte';
}

/**
 * A caller-chosen document (C5), as the caller sent it: well-formed XML without a DOCTYPE, or a
 * JSON object. Its names are the caller's data (`__proto__` included), so it is handed on as text,
 * never built into objects here.
 */
export interface AnyDocument {
  readonly text: string;
  readonly contentType: 'application/xml' | 'application/json';
}
