// Command demoserver is a small MCP server for trying the watcher: it exposes
// every regular file of one directory as a resource and tells subscribers
// when a file changes.
//
// Each file is the resource file:///<absolute path>, with a MIME type chosen
// by extension (text files are served as text, others as a base64 blob).
// The server declares resources.subscribe and resources.listChanged and
// speaks both protocol eras:
//
//   - legacy (≤ 2025-11-25): resources/subscribe and resources/unsubscribe;
//     notifications/resources/updated goes only to the sessions that
//     subscribed the URI;
//   - 2026-07-28: subscriptions/listen; notifications/resources/updated goes
//     to each listen stream whose resourceSubscriptions name the URI, tagged
//     with the listen's subscription id.
//
// A file created or removed also sends notifications/resources/list_changed.
//
// Usage:
//
//	demoserver [-dir DIR] [-http 127.0.0.1:PORT | -sse 127.0.0.1:PORT]
//
// With neither -http nor -sse it serves stdio (stdout is the protocol; logs go
// to stderr). -http serves Streamable HTTP on /mcp; -sse serves HTTP+SSE on
// /sse and /message. It stops on SIGINT/SIGTERM, or when stdin closes on stdio.
package main
