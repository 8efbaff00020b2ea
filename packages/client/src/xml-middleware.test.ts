/** The wire middleware's request side: roots and XML bodies, also below a base path. */
import { decodeXml } from '@pal-workflow/validators';
import { describe, expect, it } from 'vitest';
import { wireMiddleware, type XmlMiddlewareOptions } from './index.js';

async function pre(options: XmlMiddlewareOptions, url: string, body?: unknown) {
  const init: RequestInit = {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
  const out = await wireMiddleware(options).pre!({ fetch, url, init });
  if (!out) throw new Error('pre() returned nothing');
  return { url: out.url, headers: new Headers(out.init.headers), body: out.init.body };
}

const content = { postData: [{ name: 'a', value: 'b & c' }] };

describe('wireMiddleware', () => {
  it('replaces the default roots and encodes XML bodies', async () => {
    const options = { format: 'xml', serviceRoot: 'svc', userRoot: 'u' } as const;
    const run = await pre(options, 'http://h:1/services/rest/console/p/run', content);
    expect(run.url).toBe('http://h:1/svc/rest/console/p/run');
    expect(run.headers.get('Accept')).toBe('application/xml');
    expect(run.headers.get('Content-Type')).toBe('application/xml');
    expect(decodeXml(String(run.body), 'consoleContent')).toEqual(content);
    expect((await pre(options, 'http://h:1/user/runWorkflow?action=a')).url).toBe(
      'http://h:1/u/runWorkflow?action=a',
    );
  });

  it('works below a base path, even one that looks like a root', async () => {
    for (const basePath of ['/pal', '/pal/', '/services']) {
      const base = `http://h:1${basePath.replace(/\/$/, '')}`;
      const options = { format: 'xml', serviceRoot: 'svc', userRoot: 'u', basePath } as const;
      const run = await pre(options, `${base}/services/rest/console/p/run`, content);
      expect(run.url).toBe(`${base}/svc/rest/console/p/run`);
      expect(run.headers.get('Content-Type')).toBe('application/xml');
      expect(decodeXml(String(run.body), 'consoleContent')).toEqual(content);
      expect((await pre(options, `${base}/user/runWorkflow`)).url).toBe(`${base}/u/runWorkflow`);

      const defaults = await pre(
        { format: 'xml', serviceRoot: 'services', userRoot: 'user', basePath },
        `${base}/services/rest/console/p/run`,
        content,
      );
      expect(defaults.url).toBe(`${base}/services/rest/console/p/run`);
      expect(defaults.headers.get('Content-Type')).toBe('application/xml');
    }
  });

  it('leaves JSON alone in JSON', async () => {
    const run = await pre(
      { format: 'json', serviceRoot: 'services', userRoot: 'user' },
      'http://h:1/services/rest/console/p/run',
      content,
    );
    expect(run.headers.get('Accept')).toBe('application/json');
    expect(run.headers.get('Content-Type')).toBe('application/json');
    expect(JSON.parse(String(run.body))).toEqual(content);
  });
});
