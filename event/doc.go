// Package event defines MCPResourceEvent, the JSON message the watcher
// publishes to NATS for every read of a watched MCP resource.
//
// It imports nothing of the watcher's, so consumers (agents, other services)
// can depend on it to decode events without pulling in the daemon.
package event
