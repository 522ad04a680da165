package mcptest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// SDKOptions shape a go-sdk test server.
type SDKOptions struct {
	// Stateful serves sessions (protocol ≤ 2025-11-25 only: a stateful
	// go-sdk handler answers server/discover with legacy versions only).
	// The default is stateless, which speaks 2026-07-28.
	Stateful bool
	// Reject, when set, is called for every URI a client subscribes (by
	// resources/subscribe or inside subscriptions/listen); a non-nil error
	// refuses it. A go-sdk server then fails the whole listen with that error.
	Reject func(uri string) error
}

// SDKServer is an in-process go-sdk v1.8.0 MCP server over Streamable HTTP
// that tracks subscriptions per URI, so only subscribed URIs are notified.
type SDKServer struct {
	// URL is the endpoint a client connects to (…/mcp).
	URL  string
	HTTP *httptest.Server

	opts    SDKOptions
	mu      sync.Mutex
	texts   map[string]string
	srv     *sdk.Server
	handler atomic.Value // http.Handler, swapped by Restart
}

// StartSDK serves a new go-sdk test server on 127.0.0.1 and registers its
// cleanup.
func StartSDK(t testing.TB, opts SDKOptions) *SDKServer {
	s := &SDKServer{opts: opts, texts: map[string]string{}}
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(s.HTTP.Close)
	s.install()
	s.URL = s.HTTP.URL + "/mcp"
	return s
}

func (s *SDKServer) install() {
	check := func(_ context.Context, req *sdk.SubscribeRequest) error {
		if s.opts.Reject != nil {
			return s.opts.Reject(req.Params.URI)
		}
		return nil
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "mcptest-gosdk", Version: "1.0.0"}, &sdk.ServerOptions{
		Logger:             slog.New(slog.NewTextHandler(io.Discard, nil)),
		SubscribeHandler:   check,
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	s.mu.Lock()
	s.srv = srv
	for uri := range s.texts {
		s.addResource(srv, uri)
	}
	s.mu.Unlock()
	s.handler.Store(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: !s.opts.Stateful}))
}

func (s *SDKServer) addResource(srv *sdk.Server, uri string) {
	srv.AddResource(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			s.mu.Lock()
			text, ok := s.texts[r.Params.URI]
			s.mu.Unlock()
			if !ok {
				return nil, sdk.ResourceNotFoundError(r.Params.URI)
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
}

// Set stores a resource's text (adding the resource if new); it does not
// notify.
func (s *SDKServer) Set(uri, text string) {
	s.mu.Lock()
	_, had := s.texts[uri]
	s.texts[uri] = text
	srv := s.srv
	s.mu.Unlock()
	if !had {
		s.addResource(srv, uri)
	}
}

// Update sets the text and calls ResourceUpdated, which notifies the
// sessions and listen streams subscribed to uri.
func (s *SDKServer) Update(uri, text string) {
	s.Set(uri, text)
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	_ = srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
}

// Restart replaces the server with a fresh one and drops every open
// connection: a restart on the same address.
func (s *SDKServer) Restart() {
	s.install()
	s.HTTP.CloseClientConnections()
}
