// Command watcher turns changes in MCP resources into NATS messages.
//
//	watcher run [-c FILE]       run until SIGINT/SIGTERM (default FILE: watcher.yaml)
//	watcher validate -c FILE    check a config without connecting to anything
//	watcher version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/internal/app"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage:
  watcher run [-c FILE]        run the watcher (default config: watcher.yaml)
  watcher validate [-c FILE]   check a config file and exit
  watcher version              print the version
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "watcher", buildVersion())
		return 0
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "run":
		return runDaemon(args[1:], stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "watcher: unknown command %q\n%s", args[0], usage)
	return 2
}

func configFlag(name string, args []string, stderr io.Writer) (string, bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var path string
	fs.StringVar(&path, "c", "watcher.yaml", "config file (.yaml, .yml, .json or .toml)")
	fs.StringVar(&path, "config", "watcher.yaml", "config file (same as -c)")
	if err := fs.Parse(args); err != nil {
		return "", false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "watcher %s: unexpected argument %q\n", name, fs.Arg(0))
		return "", false
	}
	return path, true
}

// load reads the config and prints its problems, one per line.
func load(path string, stderr io.Writer) (*config.Config, bool) {
	cfg, err := config.Load(path, os.Environ())
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			for _, l := range ps.Lines() {
				fmt.Fprintln(stderr, l)
			}
			fmt.Fprintf(stderr, "%s: %d problem(s); see docs/config.md\n", path, len(ps))
		} else {
			fmt.Fprintln(stderr, err)
		}
		return nil, false
	}
	return cfg, true
}

func validate(args []string, stdout, stderr io.Writer) int {
	path, ok := configFlag("validate", args, stderr)
	if !ok {
		return 2
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	for _, s := range cfg.Skipped {
		fmt.Fprintf(stderr, "warning: server %s is skipped (continue_on_error): %s\n", s.Name, strings.Join(s.Problems, "; "))
	}
	fmt.Fprintf(stdout, "%s: ok (%d servers)\n", path, len(cfg.Servers))
	return 0
}

func runDaemon(args []string, stderr io.Writer) int {
	path, ok := configFlag("run", args, stderr)
	if !ok {
		return 2
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	logger := newLogger(cfg.Log, stderr)
	for _, s := range cfg.Skipped {
		logger.Warn("server skipped because its entry has problems (continue_on_error: true)", "server", s.Name, "problems", strings.Join(s.Problems, "; "))
	}
	if len(cfg.Servers) == 0 {
		logger.Warn("no MCP server to watch: every server is disabled or skipped")
	}

	a, err := app.New(app.Options{Config: cfg, Logger: logger, Version: buildVersion()})
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal now kills the process the default way
		logger.Info("signal received; shutting down (send it again to exit at once)")
	}()
	if err := a.Run(ctx); err != nil {
		logger.Error("watcher stopped with an error", "err", err)
		return 1
	}
	logger.Info("watcher stopped")
	return 0
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
