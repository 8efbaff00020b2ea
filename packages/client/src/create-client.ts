/**
 * The client's entry point: base URL, BASIC credentials and the wire format
 * (JSON or XML) in one place, over the generated typescript-fetch APIs.
 */
import type { Result } from '@pal-workflow/types';
import {
  Configuration,
  ConsoleApi,
  EnterpriseApi,
  PalsApi,
  TransactionsApi,
  UserApi,
  type BaseAPI,
} from './generated/index.gen.js';
import { defaultRoots } from './generated/operations.gen.js';
import { wireMiddleware, type WireFormat } from './xml-middleware.js';

export interface PalClientOptions {
  /** e.g. `http://127.0.0.1:8080`, or `https://example.com/pal` for a service below a path */
  baseUrl: string;
  username: string;
  password: string;
  /** Wire format of requests and responses; the typed values are the same. Default json. */
  format?: WireFormat;
  serviceRoot?: string;
  userRoot?: string;
  fetch?: typeof fetch;
}

export interface PalClient {
  console: ConsoleApi;
  transactions: TransactionsApi;
  user: UserApi;
  enterprise: EnterpriseApi;
  pals: PalsApi;
}

/** A non-2xx answer, with the errorResult the service sent. */
export class PalApiError extends Error {
  constructor(
    readonly status: number,
    readonly result: Result | undefined,
    readonly response: Response,
  ) {
    const first = result?.messages?.[0];
    super(
      first
        ? `${status} ${first.type ?? ''}: ${first.message}`.replace('  ', ' ')
        : `HTTP ${status}`,
    );
    this.name = 'PalApiError';
  }

  /** The stable error code (`NOT_FOUND`, `INVALID_ARGUMENT`, ...). */
  get code(): string | undefined {
    return this.result?.messages?.[0]?.type ?? undefined;
  }

  static async from(response: Response): Promise<PalApiError> {
    let result: Result | undefined;
    try {
      result = (await response.clone().json()) as Result;
    } catch {
      result = undefined;
    }
    return new PalApiError(response.status, result, response);
  }
}

export function createPalClient(options: PalClientOptions): PalClient {
  const configuration = new Configuration({
    basePath: options.baseUrl.replace(/\/$/, ''),
    username: options.username,
    password: options.password,
    fetchApi: options.fetch ?? fetch,
    middleware: [
      wireMiddleware({
        format: options.format ?? 'json',
        serviceRoot: options.serviceRoot ?? defaultRoots.service,
        userRoot: options.userRoot ?? defaultRoots.user,
        basePath: new URL(options.baseUrl).pathname,
      }),
    ],
  });
  return {
    console: withErrors(new ConsoleApi(configuration)),
    transactions: withErrors(new TransactionsApi(configuration)),
    user: withErrors(new UserApi(configuration)),
    enterprise: withErrors(new EnterpriseApi(configuration)),
    pals: withErrors(new PalsApi(configuration)),
  };
}

/** The generated runtime throws the raw Response on a non-2xx answer: turn it into a PalApiError. */
function withErrors<T extends BaseAPI>(api: T): T {
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || String(prop).startsWith('with')) return value;
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } catch (e) {
          if (e instanceof Response) throw await PalApiError.from(e);
          throw e;
        }
      };
    },
  });
}
