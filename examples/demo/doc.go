// Package demo holds the README's first run: watcher.yaml and the files the
// demo MCP server (examples/demoserver) serves. Its test keeps the config
// loadable as the config package evolves.
package demo
