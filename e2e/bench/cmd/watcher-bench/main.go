// Command watcher-bench runs the watcher's benchmark suite (package
// e2e/bench) and prints its table: every figure next to a raw baseline
// measured in the same run.
//
//	go run ./e2e/bench/cmd/watcher-bench            # full suite, a few minutes
//	go run ./e2e/bench/cmd/watcher-bench -short     # CI-sized, seconds
//	go run ./e2e/bench/cmd/watcher-bench -only storm,scale -profile /tmp/prof
//
// make bench runs the full suite and the testing.B benchmarks; make
// bench-short the CI-sized run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwatch/watcher/e2e/bench"
)

func main() {
	bench.MaybeChild() // the re-executed watcher and baseline children
	os.Exit(run())
}

func run() int {
	var opts bench.Options
	var only string
	flag.BoolVar(&opts.Short, "short", false, "CI-sized run: tiny counts and windows (the figures only show that it works)")
	flag.StringVar(&only, "only", "", "comma-separated scenarios to run: "+strings.Join(bench.Scenarios, ","))
	flag.StringVar(&opts.ProfileDir, "profile", "", "write CPU and allocation profiles of the watcher child into this directory")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	flag.Parse()
	if only != "" {
		opts.Only = strings.Split(only, ",")
	}
	if !*quiet {
		opts.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	t0 := time.Now()
	rows, err := bench.Run(ctx, opts)
	fmt.Printf("watcher-bench on %s, %d CPUs, %s; %s\n\n", cpuModel(), runtime.NumCPU(), runtime.Version(), mode(opts.Short))
	bench.WriteTable(os.Stdout, rows)
	fmt.Printf("\n(%s)\n", time.Since(t0).Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "watcher-bench:", err)
		return 1
	}
	return 0
}

func mode(short bool) string {
	if short {
		return "short mode (CI-sized; figures not meaningful)"
	}
	return "full mode"
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
