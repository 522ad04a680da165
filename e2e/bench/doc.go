// Package bench is the watcher's benchmark suite: it measures the whole
// pipeline (MCP notification → resources/read → event → JetStream) against
// raw baselines measured in the same run, and prints each figure next to its
// baseline as a ratio, because the machines it runs on are noisy.
//
// # Shape
//
// The parent process (the watcher-bench command, or the test binary) runs
// everything the watcher talks to: MCP servers written for the benchmark
// (mcp-go over loopback Streamable HTTP, protocol 2026-07-28, 1 KiB texts),
// an in-process NATS server with JetStream, and a JetStream consumer that
// timestamps every event it receives. The stdio throughput scenario is the
// exception: its MCP server is a stdio child of the watcher (this
// executable again, WATCHER_BENCH_CHILD=stdio-server), its closed loop
// switched from the parent over a Unix socket. The watcher itself runs in
// a child process (the same executable, re-executed with WATCHER_BENCH_CHILD set)
// through internal/app, the same code cmd/watcher runs, so its RSS,
// goroutines and CPU time are its own. Baselines run in a child process too:
// a bare mcp-go client in a read loop (and, for CPU, a bare JetStream
// publish of each read).
//
// Run is the suite; Options.Short sizes it for CI (TestBenchShort runs it
// inside go test ./...). Programs that embed the suite must call MaybeChild
// first thing in main (or TestMain), so the re-executed child does its job
// instead of starting the suite again.
//
// The suite measures; it never fails on a figure. Targets are checked and
// reported in the table's last column, never asserted.
//
// See docs/benchmarks.md for the figures on the reference machine and what
// limits each of them.
package bench
