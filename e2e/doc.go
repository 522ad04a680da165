// Package e2e holds the watcher's end-to-end tests: the whole daemon
// (internal/app) runs in-process against an in-process NATS server with
// JetStream and real MCP servers — the bundled demo server over stdio,
// mcp-go and go-sdk servers over SSE and Streamable HTTP, and
// @modelcontextprotocol/server-everything (see e2e/peers) — and the tests
// read the events back from the stream as a consumer would.
//
// Run them with `go test -race ./e2e/` after `npm ci` in e2e/ (`make test`
// does both). WATCHER_TEST_LOG=1 copies the watcher's logs to stderr.
//
// The shared helpers live in helpers_test.go: startNATS, baseConfig /
// withServer / loadConfig (a config as config.Load makes it), runApp (an App
// whose Run must return nil when the test ends), consume (a JetStream
// collector whose next keeps the events it skips) and demoServer (the demo
// server binary, built once per run).
package e2e
