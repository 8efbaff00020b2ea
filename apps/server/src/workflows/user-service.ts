// U1's response (docs/workflows.md, "U1: paging and limits"): defaults, listLimit, paging,
// sizeLimit and DebugInfo, applied to what the user module returned.
import type * as Wire from '@pal-workflow/types';
import { encodeJson, zServiceResponse } from '@pal-workflow/validators';
import type { StackFrame } from './job.js';
import { fit, isPlainObject, OutputError } from './output.js';
import { InvalidArgumentError } from '../domain/errors.js';

const DEFAULT_PAGE_SIZE = 50;

/** What U1's caller asked for; absent members as the ServiceRequest's defaults. */
export interface UserRunOptions {
  workflow: string;
  action: string;
  listLimit: number;
  paging: boolean;
  page: number;
  pageSize: number;
  sizeLimit: number;
  debug: boolean;
}

/**
 * U1's numbers are counts and a page number: 0 (what a client that fills every member sends)
 * means the default, and a negative one is refused before the run, not read as the default.
 */
export function refuseNegativePaging(request: Partial<Wire.ServiceRequest> | undefined): void {
  for (const name of ['page', 'pageSize', 'listLimit', 'sizeLimit'] as const) {
    const value = request?.[name];
    if (value !== undefined && value < 0)
      throw new InvalidArgumentError(`ServiceRequest.${name}: must be 0 or more, got ${value}`);
  }
}

export function userRunOptions(
  workflow: string,
  action: string,
  request: Partial<Wire.ServiceRequest> | undefined,
): UserRunOptions {
  const positive = (value: number | undefined, fallback: number) =>
    value !== undefined && value > 0 ? value : fallback;
  return {
    workflow,
    action,
    listLimit: positive(request?.listLimit, 0),
    paging: request?.paging ?? false,
    page: positive(request?.page, 1),
    pageSize: positive(request?.pageSize, DEFAULT_PAGE_SIZE),
    sizeLimit: positive(request?.sizeLimit, 0),
    debug: request?.debug ?? false,
  };
}

export function serviceResponse(value: unknown, options: UserRunOptions): Wire.ServiceResponse {
  if (value !== undefined && !isPlainObject(value))
    throw new OutputError('the workflow must return an object (a ServiceResponse) or nothing');
  const given = value ?? {};
  const payload = isPlainObject(given.payload)
    ? { data: {}, dataMaps: {}, dataLists: {}, ...given.payload }
    : given.payload;
  const response = fit(
    zServiceResponse,
    { success: true, listBindings: {}, currentPage: 1, totalPages: 1, ...given, payload },
    'ServiceResponse',
  );

  const lists = Object.values(response.payload?.dataLists ?? {});
  if (options.listLimit > 0)
    for (const list of lists) if (list.rows) list.rows = list.rows.slice(0, options.listLimit);
  if (options.paging) {
    // A loop, not Math.max(...): a workflow may return more lists than a call takes arguments.
    let longest = 0;
    for (const list of lists) longest = Math.max(longest, list.rows?.length ?? 0);
    const start = (options.page - 1) * options.pageSize;
    for (const list of lists)
      if (list.rows) list.rows = list.rows.slice(start, start + options.pageSize);
    response.currentPage = options.page;
    response.totalPages = Math.max(1, Math.ceil(longest / options.pageSize));
  } else {
    response.currentPage = 1;
    response.totalPages = 1;
  }
  if (options.debug)
    response.debugInfo = { workflow: options.workflow, action: options.action, line: 0 };

  if (options.sizeLimit > 0) {
    const size = Buffer.byteLength(encodeJson('ServiceResponse', response));
    if (size > options.sizeLimit)
      throw new OutputError(
        `the response is ${size} bytes, more than the request's sizeLimit of ${options.sizeLimit}`,
      );
  }
  return response;
}

/** A failed run as U1 answers it: success=false, errorMessage and DebugInfo. */
export function failedServiceResponse(
  message: string,
  frames: StackFrame[],
  options: Pick<UserRunOptions, 'workflow' | 'action'>,
): Wire.ServiceResponse {
  return {
    success: false,
    errorMessage: message,
    currentPage: 1,
    totalPages: 1,
    listBindings: {},
    debugInfo: {
      workflow: options.workflow,
      action: options.action,
      line: frames[0]?.line ?? 0,
      callStack: frames.map((frame) => `${frame.functionName} (${frame.module}:${frame.line})`),
    },
  };
}
