// The files a session page loads, served from the service's own origin (docs/web-mode.md):
//   GET /{service_root}/assets/pdfjs-{version}/…          pdf.js's build, its worker and standard fonts
//   GET /{service_root}/assets/signature_pad-{version}/…  the signature pad
//   GET /{service_root}/assets/page-{hash}/…              the page's own script and stylesheet
// Each path names a version or a hash of what it holds, so an answer may be cached for a year:
// a new release changes the path. Only the files listed here are served; nothing else is read.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);
const gzipped = promisify(gzip);

/** The page's own files: apps/server/assets, found from src/http and from dist/http alike. */
const OWN_DIR = join(import.meta.dirname, '..', '..', 'assets');

interface Asset {
  type: string;
  content: Buffer;
  /** The gzip form, made on the first request that accepts it. */
  gzip?: Buffer;
}

/** Where the page finds each file: the URLs it writes into the HTML. */
export interface AssetUrls {
  pdfjs: string;
  pdfjsWorker: string;
  /** A folder URL, ending in `/` (pdf.js appends the font's file name). */
  standardFonts: string;
  signaturePad: string;
  script: string;
  stylesheet: string;
}

/** The served files of one service, read once when the service starts. */
export interface Assets {
  urls: AssetUrls;
  files: ReadonlyMap<string, Asset>;
}

const TYPES: Record<string, string> = {
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.pfb': 'application/octet-stream',
  '.ttf': 'font/ttf',
};

function typeOf(file: string): string {
  return TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream';
}

/** A dependency's folder and version, found from its entry point (not every package exports its package.json). */
function packageDir(name: string): { dir: string; version: string } {
  let dir = dirname(require.resolve(name));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version: string };
      if (json.name === name) return { dir, version: json.version };
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`the package ${name} has no package.json`);
    dir = up;
  }
}

/**
 * Reads the served files and names their URLs under `{publicServicePath}/assets/` (the path the
 * browser sees: Config.publicServicePath), which registerAssets serves at `/{root}/assets/`.
 */
export function loadAssets(publicServicePath: string): Assets {
  const files = new Map<string, Asset>();
  const add = (path: string, file: string) =>
    files.set(path, { type: typeOf(file), content: readFileSync(file) });

  const pdfjs = packageDir('pdfjs-dist');
  const pdfjsPath = `pdfjs-${pdfjs.version}`;
  add(`${pdfjsPath}/pdf.min.mjs`, join(pdfjs.dir, 'build', 'pdf.min.mjs'));
  add(`${pdfjsPath}/pdf.worker.min.mjs`, join(pdfjs.dir, 'build', 'pdf.worker.min.mjs'));
  // A PDF that names a standard font without embedding it (Helvetica, as pdf-lib writes) is drawn
  // with these, never with whatever the phone has.
  const fonts = join(pdfjs.dir, 'standard_fonts');
  for (const font of readdirSync(fonts))
    if (/\.(pfb|ttf)$/.test(font)) add(`${pdfjsPath}/standard_fonts/${font}`, join(fonts, font));

  const pad = packageDir('signature_pad');
  const padPath = `signature_pad-${pad.version}`;
  add(`${padPath}/signature_pad.min.js`, join(pad.dir, 'dist', 'signature_pad.min.js'));

  const own = ['session-page.js', 'session-page.css'].map((name) => ({
    name,
    content: readFileSync(join(OWN_DIR, name)),
  }));
  const hash = createHash('sha256');
  for (const file of own) hash.update(file.content);
  const ownPath = `page-${hash.digest('base64url').slice(0, 12)}`;
  for (const file of own)
    files.set(`${ownPath}/${file.name}`, { type: typeOf(file.name), content: file.content });

  const base = `${publicServicePath}/assets/`;
  return {
    files,
    urls: {
      pdfjs: `${base}${pdfjsPath}/pdf.min.mjs`,
      pdfjsWorker: `${base}${pdfjsPath}/pdf.worker.min.mjs`,
      standardFonts: `${base}${pdfjsPath}/standard_fonts/`,
      signaturePad: `${base}${padPath}/signature_pad.min.js`,
      script: `${base}${ownPath}/session-page.js`,
      stylesheet: `${base}${ownPath}/session-page.css`,
    },
  };
}

/** `GET /{root}/assets/*`: the listed files, gzipped for a browser that accepts it; 404 otherwise. */
export function registerAssets(app: FastifyInstance, root: string, assets: Assets): void {
  app.get<{ Params: { '*': string } }>(`/${root}/assets/*`, async (request, reply) => {
    const asset = assets.files.get(request.params['*']);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    reply
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cross-Origin-Resource-Policy', 'same-origin')
      .header('Vary', 'Accept-Encoding')
      .type(asset.type);
    if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
      // Off the event loop (zlib's thread pool); two first requests may both compress, harmlessly.
      asset.gzip ??= await gzipped(asset.content, { level: 9 });
      return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
    }
    return reply.send(asset.content);
  });
}
