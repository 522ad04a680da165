package e2e

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/handlers"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/subscriber"
)

// sdkServer is a stateful go-sdk server (protocol 2025-11-25) over
// Streamable HTTP whose resources/subscribe refuses the URIs in reject.
type sdkServer struct {
	URL string
	srv *sdk.Server
	mu  sync.Mutex
	txt map[string]string
}

func startSDKServer(t *testing.T, texts map[string]string, reject ...string) *sdkServer {
	t.Helper()
	s := &sdkServer{txt: texts}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "e2e-gosdk", Version: "1.0.0"}, &sdk.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			for _, u := range reject {
				if req.Params.URI == u {
					return errors.New("this server does not allow subscriptions to " + u)
				}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	for uri := range texts {
		s.srv.AddResource(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: s.txt[r.Params.URI]}}}, nil
			})
	}
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, nil))
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/mcp"
	return s
}

func (s *sdkServer) update(uri, text string) {
	s.mu.Lock()
	s.txt[uri] = text
	s.mu.Unlock()
	_ = s.srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
}

// uriStatus returns the status of uri on server, or fails the test.
func uriStatus(t *testing.T, r *running, server, uri string) subscriber.URIStatus {
	t.Helper()
	for _, s := range r.Status() {
		if s.Server != server {
			continue
		}
		for _, u := range s.URIs {
			if u.URI == uri {
				return u
			}
		}
	}
	t.Fatalf("no status for %s %s: %+v", server, uri, r.Status())
	return subscriber.URIStatus{}
}

// TestRejectedURI: the server refuses resources/subscribe for one URI; that
// URI fails alone, with an error naming the server and the URI, and the
// others get their events.
func TestRejectedURI(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	gs := startSDKServer(t, map[string]string{"test://ok": "ok1", "test://no": "no1"}, "test://no")
	cfg := withServer(baseConfig(natsURL), "docs", M{"url": gs.URL, "subscriptions": subs("test://no", "test://ok")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)

	c.next(is("test://ok", event.ReasonStart, "ok1"))
	r.waitReady(t)
	line := r.Logs.waitLine(t, "cannot watch resource", "server=docs", "uri=test://no")
	require.Contains(t, line, "does not allow subscriptions")
	st := uriStatus(t, r, "docs", "test://no")
	require.False(t, st.Watched)
	require.Contains(t, st.Problem, "resources/subscribe failed")
	require.True(t, uriStatus(t, r, "docs", "test://ok").Watched)

	gs.update("test://ok", "ok2")
	c.next(is("test://ok", event.ReasonUpdate, "ok2"))
	gs.update("test://no", "no2") // not subscribed: the server sends nothing
	gs.update("test://ok", "ok3")
	c.next(is("test://ok", event.ReasonUpdate, "ok3"))
	for _, m := range c.drain() {
		require.False(t, m.Ev.URI == "test://no" && m.Ev.Reason == event.ReasonUpdate, "an update event for the rejected URI")
	}
}

// TestNoSubscribeCapability: a server without resources.subscribe gives a
// clear problem in its status, the process keeps running, and other servers
// deliver.
func TestNoSubscribeCapability(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	bare := mcptest.Start(t, mcptest.Options{NoSubscribe: true, Legacy: true})
	bare.Set("test://a", "a1")
	good := mcptest.Start(t, mcptest.Options{})
	good.Set("test://g", "g1")
	cfg := baseConfig(natsURL)
	withServer(cfg, "bare", M{"url": bare.URL, "subscriptions": subs("test://a")})
	withServer(cfg, "good", M{"url": good.URL, "subscriptions": subs("test://g")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)

	c.next(is("test://g", event.ReasonStart, "g1"))
	r.waitReady(t) // the session is up; only the URI cannot be watched
	r.Logs.waitLine(t, "cannot watch resource", "server=bare", "uri=test://a")
	st := uriStatus(t, r, "bare", "test://a")
	require.False(t, st.Watched)
	require.Contains(t, st.Problem, "does not declare the resources.subscribe capability")
	good.Update("test://g", "g2")
	c.next(is("test://g", event.ReasonUpdate, "g2"))
}

// TestHandlerHangs: a middleware that blocks for one URI and ignores its
// context is cut off at handler_timeout_seconds and logged, and meanwhile
// other URIs of the same server and other servers deliver their events.
func TestHandlerHangs(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://hang", "h1")
	ms.Set("test://fine", "f1")
	dir := demoFiles(t, map[string]string{"other.txt": "o1"})
	other := fileURI(dir, "other.txt")

	release := make(chan struct{})
	hang := func(next handlers.Handler) handlers.Handler {
		return func(ctx context.Context, ev *event.MCPResourceEvent) error {
			if ev.URI != "test://hang" {
				return next(ctx, ev)
			}
			<-release // ignores ctx on purpose
			return errors.New("released at the end of the test")
		}
	}
	cfg := baseConfig(natsURL)
	withServer(cfg, "http", M{"url": ms.URL, "subscriptions": []M{
		{"uri": "test://hang", "handler_timeout_seconds": 1},
		{"uri": "test://fine", "handler_timeout_seconds": 1},
	}})
	withServer(cfg, "stdio", demoServerEntry(t, dir, other))
	r := runApp(t, loadConfig(t, cfg), app.Options{Middleware: []handlers.Middleware{hang}})
	// Cleanups run last-in first-out: release the hung handlers before the
	// app is stopped; its shutdown waits for them.
	t.Cleanup(func() { close(release) })
	c := consume(t, natsURL)

	c.next(is("test://fine", event.ReasonStart, "f1"))
	c.next(is(other, event.ReasonStart, "o1"))
	line := r.Logs.waitLine(t, "handler timed out", "uri=test://hang")
	require.Contains(t, line, "server=http")
	require.Contains(t, line, "reason=start")

	// The hung URI is retried and hangs again; the rest still flows.
	ms.Update("test://fine", "f2")
	c.next(is("test://fine", event.ReasonUpdate, "f2"))
	writeFile(t, dir, "other.txt", "o2")
	c.next(is(other, event.ReasonUpdate, "o2"))
	for _, m := range c.drain() {
		require.False(t, strings.HasPrefix(m.Ev.URI, "test://hang"), "an event of the hung URI was published")
	}
}
