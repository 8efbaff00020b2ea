// Types of node-flags.js (plain JavaScript, read by bin/pal.js before anything is compiled).
export declare const DEFAULT_SEMI_SPACE_MB: number;
export declare const DEFAULT_HEAP_GROWING_PERCENT: number;
export declare function serverNodeFlags(
  env: Record<string, string | undefined>,
  given?: readonly string[],
): { flags: string[]; error?: undefined } | { flags?: undefined; error: string };
