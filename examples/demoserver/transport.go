package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// shutdownGrace bounds how long HTTP connections get to finish on shutdown.
const shutdownGrace = 5 * time.Second

// serveStdio serves one client on stdin/stdout. It blocks until stdin closes
// (nil) or ctx ends (nil).
func serveStdio(ctx context.Context, srv *server.MCPServer, stdin io.Reader, stdout io.Writer) error {
	err := server.NewStdioServer(srv).Listen(ctx, stdin, stdout)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

// streamableHandler serves Streamable HTTP on /mcp.
func streamableHandler(srv *server.MCPServer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(srv))
	return mux
}

// serveHTTP listens on addr and serves h until ctx ends; it blocks until the
// listener is closed and open connections were given shutdownGrace to finish.
func serveHTTP(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	logger.Info("serving Streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	return serveOn(ctx, ln, h)
}

// serveSSE listens on addr and serves HTTP+SSE (/sse, /message) until ctx
// ends. It blocks like serveHTTP.
func serveSSE(ctx context.Context, addr string, srv *server.MCPServer, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	logger.Info("serving HTTP+SSE", "url", "http://"+ln.Addr().String()+"/sse")
	return serveSSEOn(ctx, ln, srv)
}

// serveSSEOn serves HTTP+SSE on ln until ctx ends, then closes the sessions.
func serveSSEOn(ctx context.Context, ln net.Listener, srv *server.MCPServer) error {
	sse := server.NewSSEServer(srv, server.WithBaseURL("http://"+ln.Addr().String()))
	defer sse.CloseSessions()
	return serveOn(ctx, ln, sse)
}

// serveOn runs an http.Server on ln until ctx ends, then shuts it down.
func serveOn(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Requests inherit ctx, so open streams (SSE, listen) end with it.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Streams (SSE, listen) never finish on their own: close what is left.
	shutdownErr := hs.Shutdown(sctx)
	if errors.Is(shutdownErr, context.DeadlineExceeded) {
		shutdownErr = hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errors.Join(fmt.Errorf("http server: %w", err), shutdownErr)
	}
	return shutdownErr
}
