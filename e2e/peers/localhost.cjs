// A --require preload for tests: every net.Server.listen that names no host
// binds 127.0.0.1 instead of every interface. Third-party MCP servers often
// call listen(PORT) with no host; a test must not expose them.
//
//   node --require ./e2e/peers/localhost.cjs server.js
'use strict';
const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    // listen(options[, cb]): a path means a unix socket, and a handle or fd
    // is already bound: leave those alone.
    const bound = first.path !== undefined || first.fd !== undefined || first.handle !== undefined || first._handle !== undefined;
    if (!bound && first.host === undefined) {
      args[0] = { ...first, host: '127.0.0.1' };
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first)) || first === undefined || typeof first === 'function') {
    // listen([port][, host][, backlog][, cb]): insert the host after the port.
    const port = typeof first === 'function' || first === undefined ? 0 : first;
    const rest = typeof first === 'function' ? args : args.slice(1);
    if (typeof rest[0] !== 'string') {
      args = [port, '127.0.0.1', ...rest];
    }
  }
  return listen.apply(this, args);
};
