// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that checks every delivery with
// the `standardwebhooks` package (written by others, to the Standard Webhooks spec), under the
// secret registered for the request's path, and keeps what it received. Its answer is up to the
// test (`respond`), 204 by default.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  type: string;
  data: Record<string, unknown>;
  /** Date.now() when the request arrived. */
  at: number;
  /** The status the receiver answered. */
  status: number;
  /** Which registered secrets `Webhook.verify` accepted it under (by their index). */
  verifiedBy: number[];
  /** The sender hung up before the answer (it was killed, or gave up): not taken. */
  abandoned: boolean;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT` */
  url: string;
  received: ReceivedWebhook[];
  /** The `whsec_…` secrets a path's deliveries are checked against (rotation: several). */
  secrets: Map<string, string[]>;
  /** The status to answer (may wait first); 204 when unset. */
  respond?: (hook: Omit<ReceivedWebhook, 'status' | 'abandoned'>) => number | Promise<number>;
  /** Deliveries of a path, in arrival order. */
  of(path: string): ReceivedWebhook[];
  /** Resolves once `predicate` holds of what was received (polls; fails after `timeoutMs`). */
  until(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function verify(secrets: string[], body: string, headers: Record<string, string>): number[] {
  const accepted: number[] = [];
  secrets.forEach((secret, index) => {
    try {
      new Webhook(secret).verify(body, headers);
      accepted.push(index);
    } catch {
      // Not under this secret.
    }
  });
  return accepted;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const secrets = new Map<string, string[]>();
  const receiver: WebhookReceiver = {
    url: '',
    received,
    secrets,
    of: (path) => received.filter((r) => r.path === path),
    async until(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline)
          throw new Error(`the receiver did not get what was expected; it has ${received.length}`);
        await new Promise((done) => setTimeout(done, 20));
      }
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  const server = createServer((request, response) => {
    let hungUp = false;
    response.once('close', () => {
      if (!response.writableFinished) hungUp = true;
    });
    void (async () => {
      const body = await bodyOf(request);
      const header = (name: string) => String(request.headers[name] ?? '');
      const path = (request.url ?? '/').split('?')[0]!;
      const headers = {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      };
      let parsed: { type?: string; data?: Record<string, unknown> } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        // Kept as it came; the test sees type ''.
      }
      const hook = {
        path,
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        type: parsed.type ?? '',
        data: parsed.data ?? {},
        at: Date.now(),
        verifiedBy: verify(secrets.get(path) ?? [], body, headers),
      };
      const status = receiver.respond ? await receiver.respond(hook) : 204;
      received.push({ ...hook, status, abandoned: hungUp });
      response.writeHead(status).end();
    })().catch(() => response.writeHead(500).end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
