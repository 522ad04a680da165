// Package peers starts MCP servers that nobody on this project wrote, for
// tests in any package: @modelcontextprotocol/server-everything (TypeScript
// SDK v1, protocol 2025-11-25 and older) over stdio, Streamable HTTP and SSE,
// and modern-server.mjs, a small TypeScript SDK v2 server that speaks protocol
// 2026-07-28.
//
// They are node programs installed by `npm ci` in e2e/ (pinned in
// e2e/package.json and its lock file); `make test` runs it. Every helper binds
// to 127.0.0.1 only (HTTP servers that call listen(PORT) without a host get
// the localhost.cjs preload), and every process it starts is killed, with its
// process group, when the test ends.
package peers
