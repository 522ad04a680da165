// Package subscriber watches the resources of one MCP server.
//
// A Watcher owns everything for one configured server: a reconnect
// supervisor that (re)establishes a Session, the subscription of every
// configured URI (resources/subscribe on the legacy protocol,
// subscriptions/listen on 2026-07-28), and a small pool of read workers.
//
// One event's path: the transport's reader goroutine delivers
// notifications/resources/updated; the notification handler only marks the
// URI dirty (it never blocks: a read there deadlocks stdio and SSE). A worker
// takes dirty URIs; per URI at most one read is in flight, and a notification
// during a read marks it dirty again, so exactly one more read follows. The
// read result becomes an event.MCPResourceEvent (id, seq, content_sha256)
// that is handed to the Sink under the subscription's handler timeout.
//
// mcp-go stays behind the Session interface (session.go); mcpgo.go is the
// only file that knows its API.
package subscriber
