/** The operations half of the model, read from the hand-written OpenAPI document. */

export type ScalarType = 'string' | 'boolean' | 'int';

export interface ParamModel {
  name: string;
  type: ScalarType;
  required: boolean;
  description?: string;
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
  form?: { fields: ParamModel[] };
  /** A typed body (a root element of the XSDs), or any well-formed document. */
  body?:
    | { kind: 'typed'; root: string; type: string; required: boolean }
    | { kind: 'any'; required: boolean };
  response: ResponseModel;
  totalCountHeader: boolean;
}
