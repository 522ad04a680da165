// Package mcptest runs real mcp-go MCP servers in-process for the watcher's
// tests: Streamable HTTP or SSE over a loopback httptest server, with a
// resource store the test changes and notifications it triggers on both
// protocol eras. Every Server is closed by t.Cleanup.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Options shape a test server.
type Options struct {
	// NoSubscribe omits the resources.subscribe capability.
	NoSubscribe bool
	// Stateful makes Streamable HTTP validate sessions (404 for unknown ones).
	Stateful bool
	// SSE serves the 2024-11-05 HTTP+SSE transport instead of Streamable HTTP.
	SSE bool
	// Legacy hides server/discover, so clients fall back to initialize.
	Legacy bool
	// Refuse lists URIs the server leaves out of subscriptions/listen (they
	// are stripped from the request, so the acknowledgement omits them).
	Refuse []string
}

// Server is an in-process MCP server whose resources are texts in a map.
type Server struct {
	t    testing.TB
	opts Options
	// URL is the endpoint a client connects to (…/mcp or …/sse).
	URL  string
	HTTP *httptest.Server

	mu     sync.Mutex
	texts  map[string]string
	reads  map[string]int
	mcp    *server.MCPServer
	listen sync.Map // server.ClientSession -> struct{}

	handler atomic.Value  // http.Handler, swapped by Restart
	Block   chan struct{} // when non-nil, reads wait on it (tests of slow reads)
}

// Start serves a new test server on 127.0.0.1 and registers its cleanup.
func Start(t testing.TB, opts Options) *Server {
	s := &Server{t: t, opts: opts, texts: map[string]string{}, reads: map[string]int{}}
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(s.HTTP.Close)
	s.install()
	if opts.SSE {
		s.URL = s.HTTP.URL + "/sse"
	} else {
		s.URL = s.HTTP.URL + "/mcp"
	}
	return s
}

// install builds a fresh MCPServer (no sessions) with every resource.
func (s *Server) install() {
	hooks := &server.Hooks{}
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest) {
		s.listen.Store(server.ClientSessionFromContext(ctx), struct{}{})
	})
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		s.listen.Delete(server.ClientSessionFromContext(ctx))
	})
	m := server.NewMCPServer("mcptest", "1.0.0", server.WithResourceCapabilities(!s.opts.NoSubscribe, true), server.WithHooks(hooks))
	s.mu.Lock()
	s.mcp = m
	for uri := range s.texts {
		s.addResource(m, uri)
	}
	s.mu.Unlock()
	var h http.Handler
	switch {
	case s.opts.SSE:
		h = server.NewSSEServer(m, server.WithBaseURL(s.HTTP.URL))
	default:
		h = server.NewStreamableHTTPServer(m, server.WithStateful(s.opts.Stateful))
	}
	if s.opts.Legacy {
		h = hideDiscover(h)
	}
	if len(s.opts.Refuse) > 0 {
		h = refuse(h, s.opts.Refuse)
	}
	s.handler.Store(h)
}

func (s *Server) addResource(m *server.MCPServer, uri string) {
	m.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			if b := s.Block; b != nil {
				select {
				case <-b:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			s.mu.Lock()
			text, ok := s.texts[r.Params.URI]
			s.reads[r.Params.URI]++
			s.mu.Unlock()
			if !ok {
				return nil, mcp.ErrResourceNotFound
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: text}}, nil
		})
}

// Set stores a resource's text (adding the resource if new); it does not
// notify.
func (s *Server) Set(uri, text string) {
	s.mu.Lock()
	_, had := s.texts[uri]
	s.texts[uri] = text
	m := s.mcp
	if !had {
		s.addResource(m, uri)
	}
	s.mu.Unlock()
}

// Delete removes a resource; reads then fail with RESOURCE_NOT_FOUND
// (INVALID_PARAMS on 2026-07-28). The resource leaves the server too: mcp-go
// sends any error a read handler returns as an internal error. Set adds it
// back.
func (s *Server) Delete(uri string) {
	s.mu.Lock()
	delete(s.texts, uri)
	m := s.mcp
	s.mu.Unlock()
	m.DeleteResources(uri)
}

// Update sets the text and sends notifications/resources/updated.
func (s *Server) Update(uri, text string) {
	s.Set(uri, text)
	s.Notify(uri)
}

// Notify sends notifications/resources/updated for uri to every client:
// legacy sessions by broadcast, modern listen streams through their
// notification channels (mcp-go's broadcast skips those).
func (s *Server) Notify(uri string) {
	s.mu.Lock()
	m := s.mcp
	s.mu.Unlock()
	m.SendNotificationToAllClients(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationResourceUpdated,
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
	}}
	s.listen.Range(func(k, _ any) bool {
		select {
		case k.(server.ClientSession).NotificationChannel() <- n:
		default:
		}
		return true
	})
}

// Reads returns how many times uri was read.
func (s *Server) Reads(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[uri]
}

// Restart replaces the server with a fresh one that knows no sessions and
// drops every open connection: a restart on the same address.
func (s *Server) Restart() {
	s.listen.Range(func(k, _ any) bool { s.listen.Delete(k); return true })
	s.install()
	s.HTTP.CloseClientConnections()
}

// hideDiscover answers server/discover with method-not-found, as a server
// of the 2025-11-25 era does.
func hideDiscover(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// refuse strips uris from the resourceSubscriptions of every
// subscriptions/listen request, so the server does not honour them.
func refuse(h http.Handler, uris []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg map[string]any
		if json.Unmarshal(body, &msg) == nil && msg["method"] == "subscriptions/listen" {
			if p, ok := msg["params"].(map[string]any); ok {
				if n, ok := p["notifications"].(map[string]any); ok {
					if list, ok := n["resourceSubscriptions"].([]any); ok {
						kept := []any{}
						for _, u := range list {
							if !slices.Contains(uris, u.(string)) {
								kept = append(kept, u)
							}
						}
						n["resourceSubscriptions"] = kept
						body, _ = json.Marshal(msg)
					}
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}
