// CONNECT asks for a tunnel, which the service does not open. Node hands such a request to the
// server's 'connect' listeners only, and without one destroys its socket: the client read nothing.
// It is served here as any other request of a method the service does not take (the router's
// not-found handler: 405 with Allow for a path that takes other methods, else 501), in the format
// its Accept asks for, and the connection is closed once the answer is out: Node has already taken
// its parser off the socket, so nothing more is read from it.
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';

export function serveConnectRequests(server: Server): void {
  // A plain server's sockets are net.Sockets (Node types them as Duplex for other transports).
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on('finish', () => {
      response.detachSocket(socket);
      socket.destroySoon();
    });
    server.emit('request', request, response);
  });
}
