// A port for a server a test or bench starts: one the system just gave out on 127.0.0.1, free a
// moment ago. Where a child process must be told its port before it listens (PUBLIC_URL follows
// it), listening on port 0 inside the child cannot serve.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}
