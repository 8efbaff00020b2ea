/** The operations half of the model, read from the hand-written OpenAPI document. */

export type ScalarType = 'string' | 'boolean' | 'int';

export interface ParamModel {
  name: string;
  type: ScalarType;
  required: boolean;
  description?: string;
  /** `maxLength` of a string parameter: longer values are refused with 400. */
  maxLength?: number;
  /** `enum` of a string parameter: the only values accepted (others are a 400), its TS type. */
  enum?: string[];
}

export type ResponseModel =
  | { kind: 'simple'; type: ScalarType; root: 'string' | 'boolean' | 'int' }
  | { kind: 'object'; type: string; root: string }
  | { kind: 'list'; itemType: string; root: string };

export interface OperationModel {
  id: string;
  specId: string;
  tag: string;
  summary: string;
  method: 'GET' | 'POST';
  /** Which configurable first path segment the path starts with. */
  root: 'service' | 'user';
  /** The path after the root, OpenAPI style: `/rest/pals/{id}`. */
  path: string;
  /** The literal OpenAPI path, with the default root. */
  openapiPath: string;
  pathParams: ParamModel[];
  queryParams: ParamModel[];
  /** Search headers and the search type they build, if any. */
  search?: { type: string; headers: ParamModel[] };
  /**
   * Headers marked `x-transport: true`: read by the server around the operation (e.g.
   * Idempotency-Key), not part of the handler's input.
   */
  transportHeaders?: ParamModel[];
  form?: { fields: ParamModel[] };
  /** A typed body (a root element of the XSDs), or any well-formed document. */
  body?:
    | { kind: 'typed'; root: string; type: string; required: boolean }
    | { kind: 'any'; required: boolean };
  response: ResponseModel;
  totalCountHeader: boolean;
}

/** The first path segments the operations' paths are written with, and a server's defaults. */
export interface RootsModel {
  service: string;
  user: string;
}

/** The whole hand-written OpenAPI document, as loaded once: what the bundle and the skeleton emit from. */
export interface ApiModel {
  /** The file the document was read from, e.g. "operations.yaml". */
  file: string;
  /**
   * The parsed document, for the parts the generators pass on without reading them (info, tags,
   * descriptions, responses, security). Emitters copy it and never change it.
   */
  document: Readonly<Record<string, unknown>>;
  /** `x-roots`: the default `{service_root}` and `{user_root}`. */
  roots: RootsModel;
  operations: OperationModel[];
}
