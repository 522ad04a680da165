// A reference peer for MCP protocol 2026-07-28, built on the TypeScript SDK v2
// (@modelcontextprotocol/server + @modelcontextprotocol/node).
//
//   PORT=0 UPDATE_MS=200 node e2e/peers/modern-server.mjs
//
// Serves Streamable HTTP on http://127.0.0.1:<port>/ (any path), prints
// "LISTENING <port>" on stdout once it accepts connections, and exposes two
// text resources, test://modern/a and test://modern/b, whose text carries a
// counter. Every UPDATE_MS the counter goes up and
// notifications/resources/updated is published for both URIs to every
// subscriptions/listen stream that asked for them. Stops on SIGTERM/SIGINT.
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const port = Number(process.env.PORT ?? 0);
const updateMs = Number(process.env.UPDATE_MS ?? 200);
const uris = ['test://modern/a', 'test://modern/b'];
let counter = 0;

const handler = createMcpHandler(() => {
  const server = new McpServer(
    { name: 'modern-peer', version: '1.0.0' },
    { capabilities: { resources: { subscribe: true, listChanged: true } } },
  );
  for (const uri of uris) {
    server.registerResource(uri.slice(uri.lastIndexOf('/') + 1), uri, { mimeType: 'text/plain' },
      async (u) => ({ contents: [{ uri: u.href, mimeType: 'text/plain', text: `${u.href} counter=${counter}` }] }));
  }
  return server;
}, { legacy: 'reject', onerror: (err) => console.error('modern-peer:', err.message) });

const timer = setInterval(() => {
  counter++;
  for (const uri of uris) handler.notify.resourceUpdated(uri);
}, updateMs);

const httpServer = http.createServer(toNodeHandler(handler));
httpServer.listen(port, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${httpServer.address().port}\n`);
});

const stop = async () => {
  clearInterval(timer);
  await handler.close();
  httpServer.closeAllConnections();
  httpServer.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
