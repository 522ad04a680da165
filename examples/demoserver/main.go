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
	"path/filepath"
	"syscall"

	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/errgroup"
)

const version = "0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// options are the parsed command-line flags.
type options struct {
	dir      string
	httpAddr string
	sseAddr  string
}

// run parses args, serves until a signal arrives or the stdio peer hangs up,
// and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demoserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts options
	fs.StringVar(&opts.dir, "dir", "./examples/demo/files", "directory whose regular files are served as resources")
	fs.StringVar(&opts.httpAddr, "http", "", "serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:8080")
	fs.StringVar(&opts.sseAddr, "sse", "", "serve HTTP+SSE on this address (paths /sse and /message), e.g. 127.0.0.1:8081")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if opts.httpAddr != "" && opts.sseAddr != "" {
		fmt.Fprintln(stderr, "demoserver: give -http or -sse, not both")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, opts, stdin, stdout, logger); err != nil {
		logger.Error("demoserver stopped", "err", err)
		return 1
	}
	return 0
}

// serve builds the demo over opts.dir and runs the directory watcher and the
// chosen transport until ctx ends or the transport stops. It blocks until both
// have exited.
func serve(ctx context.Context, opts options, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	d, err := newDemo(opts.dir, logger)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.watch(gctx) })
	g.Go(func() error {
		var err error
		switch {
		case opts.httpAddr != "":
			err = serveHTTP(gctx, opts.httpAddr, streamableHandler(d.srv), logger)
		case opts.sseAddr != "":
			err = serveSSE(gctx, opts.sseAddr, d.srv, logger)
		default:
			err = serveStdio(gctx, d.srv, stdin, stdout)
		}
		if err != nil {
			return err
		}
		// The transport ending (stdin closed) ends the whole server.
		return errStopped
	})
	if err := g.Wait(); err != nil && !errors.Is(err, errStopped) {
		return err
	}
	return nil
}

// demo is the MCP server over one directory, with its watcher.
type demo struct {
	srv     *server.MCPServer
	files   *catalog
	watcher *dirWatcher
	logger  *slog.Logger
}

// newDemo registers every file of dir as a resource and starts watching dir.
// The caller must call watch, which releases the watcher when it returns.
func newDemo(dir string, logger *slog.Logger) (*demo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("directory %s does not exist or is not a directory: pass an existing one with -dir", abs)
	}
	subs := newSubscriptions(logger)
	srv := server.NewMCPServer("demoserver", version,
		server.WithResourceCapabilities(true, true),
		server.WithHooks(subs.hooks()),
	)
	subs.attach(srv)
	files := newCatalog(abs, srv, subs, logger)
	// Watch before the first scan, so a file created in between is not missed.
	w, err := newDirWatcher(abs)
	if err != nil {
		return nil, err
	}
	files.scan()
	logger.Info("serving files", "dir", abs, "resources", files.count())
	return &demo{srv: srv, files: files, watcher: w, logger: logger}, nil
}

// watch turns directory changes into notifications until ctx ends. It blocks.
func (d *demo) watch(ctx context.Context) error {
	return d.watcher.run(ctx, d.files.changed, d.logger)
}

// errStopped makes the errgroup cancel the watcher once the transport is done.
var errStopped = errors.New("transport stopped")
