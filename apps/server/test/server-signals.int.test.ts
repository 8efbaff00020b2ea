// startServer's signals (src/server.ts), in this process: a signal that comes while the server is
// still starting waits for the start and then closes it, and a start that fails leaves no handler
// behind and nothing open. The handlers are caught rather than installed (a real SIGTERM would
// reach the test runner's own), and process.exit is only recorded.
import { createServer, Server, type AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { OutboxDispatcher } from '../src/outbox/dispatcher.js';
import { startServer } from '../src/server.js';
import { tempDir, testConfig } from './helpers.js';

type SignalHandler = (signal: NodeJS.Signals) => void;

/** Listens on `port` of 127.0.0.1 and closes again; which port it was. */
async function freePort(port: number): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', done);
  });
  const taken = (server.address() as AddressInfo).port;
  await new Promise((done) => server.close(done));
  return taken;
}

describe('startServer with handleSignals', () => {
  const dir = tempDir('pal-signals-');
  afterAll(() => dir.remove());
  afterEach(() => vi.restoreAllMocks());

  /**
   * Starts a server whose outbox, while it starts, calls `during` with a way to send a signal;
   * the signal handlers the server installs, and what it asks of process.exit.
   */
  function starting(name: string, during: (send: (signal: NodeJS.Signals) => void) => void) {
    const handlers = new Map<string, SignalHandler>();
    const once = process.once.bind(process);
    vi.spyOn(process, 'once').mockImplementation(((event: string, handler: SignalHandler) => {
      if (event !== 'SIGINT' && event !== 'SIGTERM') return once(event, handler);
      handlers.set(event, handler);
      return process;
    }) as typeof process.once);
    const off = process.off.bind(process);
    vi.spyOn(process, 'off').mockImplementation(((event: string, handler: SignalHandler) => {
      if (handlers.get(event) !== handler) return off(event, handler);
      handlers.delete(event);
      return process;
    }) as typeof process.off);
    // As `once` does: a handler goes when its signal comes.
    const send = (signal: NodeJS.Signals) => {
      const handler = handlers.get(signal);
      handlers.delete(signal);
      handler?.(signal);
    };
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const start = OutboxDispatcher.prototype.start;
    vi.spyOn(OutboxDispatcher.prototype, 'start').mockImplementation(async function (
      this: OutboxDispatcher,
    ) {
      during(send);
      // What the real start waits for: the database, a timer.
      await new Promise((done) => setTimeout(done, 50));
      return start.call(this);
    });
    const stop = vi.spyOn(OutboxDispatcher.prototype, 'stop');
    // The servers that listened meanwhile (the app's): which port the start took.
    const listening: Server[] = [];
    const listen = Server.prototype.listen;
    vi.spyOn(Server.prototype, 'listen').mockImplementation(function (
      this: Server,
      ...args: unknown[]
    ) {
      listening.push(this);
      return listen.apply(this, args as Parameters<Server['listen']>);
    } as Server['listen']);
    const portTaken = () => (listening[0]!.address() as AddressInfo).port;
    const server = startServer(testConfig(`${dir.path}/${name}`, { PORT: '0' }), {
      logger: false,
      handleSignals: true,
    });
    return { server, handlers, send, exit, stop, portTaken };
  }

  it('a signal during the start waits for it, then closes everything once and exits 0', async () => {
    const { server, handlers, send, exit, stop } = starting('during', (signal) =>
      signal('SIGTERM'),
    );
    const running = await server;
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0));
    expect(stop).toHaveBeenCalledTimes(1);
    expect(running.app.server.listening).toBe(false);
    // The other signal is still taken: a second one waits for the same close.
    expect([...handlers.keys()]).toEqual(['SIGINT']);
    send('SIGINT');
    await vi.waitFor(() => expect(exit).toHaveBeenCalledTimes(2));
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('a start that fails leaves no handler and nothing open; a signal during it does nothing', async () => {
    let port = 0;
    const { server, handlers, exit, portTaken } = starting('failing', (send) => {
      port = portTaken();
      send('SIGINT');
      throw new Error('the outbox could not start');
    });
    await expect(server).rejects.toThrow('the outbox could not start');
    expect(handlers.size).toBe(0);
    await new Promise((done) => setTimeout(done, 20));
    expect(exit).not.toHaveBeenCalled();
    // Its port was closed again: another listener may take it.
    expect(port).toBeGreaterThan(0);
    expect(await freePort(port)).toBe(port);
  });
});
