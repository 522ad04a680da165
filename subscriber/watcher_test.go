package subscriber_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/reconnect"
	"github.com/mcpwatch/watcher/subscriber"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// mcp-go's SSE server never ends a subscriptions/listen handler
		// (its context is cut off from the request): a server-side leak.
		goleak.IgnoreTopFunction("github.com/mark3labs/mcp-go/server.(*MCPServer).handleSubscriptionsListen"))
}

func logger() *slog.Logger {
	if os.Getenv("WATCHER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// harness runs one Watcher against url and collects its events.
type harness struct {
	events chan *event.MCPResourceEvent
	w      *subscriber.Watcher
	seen   []*event.MCPResourceEvent // received, not yet matched
}

func run(t *testing.T, srv config.Server, sink subscriber.Sink) *harness {
	t.Helper()
	return runWith(t, srv, sink, nil)
}

func runWith(t *testing.T, srv config.Server, sink subscriber.Sink, reads *subscriber.ReadLimiter) *harness {
	t.Helper()
	return start(t, subscriber.Options{Server: srv, Sink: sink, Logger: logger(), Reads: reads}, nil)
}

// start runs a Watcher with opts, filling in the server defaults, a fast
// reconnect policy and (when opts.Sink is nil) a sink that collects events;
// cleanup cancels it, requires Run to return nil, then calls onStop if set.
func start(t *testing.T, opts subscriber.Options, onStop func()) *harness {
	t.Helper()
	h := &harness{events: make(chan *event.MCPResourceEvent, 1000)}
	if opts.Sink == nil {
		opts.Sink = subscriber.SinkFunc(func(_ context.Context, ev *event.MCPResourceEvent) error {
			if os.Getenv("WATCHER_TEST_LOG") != "" {
				t.Logf("event %s %s seq=%d %q", ev.URI, ev.Reason, ev.Seq, text(ev))
			}
			h.events <- ev
			return nil
		})
	}
	opts.Server = withDefaults(opts.Server)
	opts.Policy = reconnect.Policy{InitialInterval: 50 * time.Millisecond, MaxInterval: 500 * time.Millisecond, Multiplier: 2, ResetAfter: time.Minute}
	h.w = subscriber.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Watcher.Run did not return after cancel")
		}
		if onStop != nil {
			onStop()
		}
	})
	return h
}

func withDefaults(s config.Server) config.Server {
	if s.Name == "" {
		s.Name = "test"
	}
	if s.TimeoutSeconds == 0 {
		s.TimeoutSeconds = 10
	}
	if s.MaxContentBytes == 0 {
		s.MaxContentBytes = 1 << 20
	}
	if s.MaxConcurrentReads == 0 {
		s.MaxConcurrentReads = 4
	}
	for i := range s.Subscriptions {
		sub := &s.Subscriptions[i]
		if sub.Method == "" {
			sub.Method = config.MethodAuto
		}
		if sub.HandlerTimeoutSeconds == 0 {
			sub.HandlerTimeoutSeconds = 5
		}
	}
	return s
}

func subs(uris ...string) []config.Subscription {
	out := make([]config.Subscription, len(uris))
	for i, u := range uris {
		out[i] = config.Subscription{URI: u, ReadOnStart: true, ReadOnReconnect: true}
	}
	return out
}

// next waits for an event matching pred, failing after a deadline.
func (h *harness) next(t *testing.T, pred func(*event.MCPResourceEvent) bool) *event.MCPResourceEvent {
	t.Helper()
	for i, ev := range h.seen {
		if pred(ev) {
			h.seen = append(h.seen[:i], h.seen[i+1:]...)
			return ev
		}
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-h.events:
			if pred(ev) {
				return ev
			}
			h.seen = append(h.seen, ev)
		case <-deadline:
			t.Fatalf("no matching event; status: %+v", h.w.Status())
			return nil
		}
	}
}

func text(ev *event.MCPResourceEvent) string {
	if ev.Resource == nil || len(ev.Resource.Contents) == 0 {
		return ""
	}
	return ev.Resource.Contents[0].Text
}

func is(uri string, r event.Reason, body string) func(*event.MCPResourceEvent) bool {
	return func(ev *event.MCPResourceEvent) bool {
		return ev.URI == uri && ev.Reason == r && (body == "" || text(ev) == body)
	}
}

func TestStartAndUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mcptest.Options
		tr   string
	}{
		{"streamable-http legacy", mcptest.Options{Legacy: true}, config.TransportStreamableHTTP},
		{"streamable-http modern", mcptest.Options{}, config.TransportStreamableHTTP},
		{"sse", mcptest.Options{SSE: true}, config.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := mcptest.Start(t, tc.opts)
			ms.Set("test://a", "a1")
			ms.Set("test://b", "b1")
			h := run(t, config.Server{Transport: tc.tr, URL: ms.URL, Subscriptions: subs("test://a", "test://b")}, nil)
			a := h.next(t, is("test://a", event.ReasonStart, "a1"))
			h.next(t, is("test://b", event.ReasonStart, "b1"))
			require.EqualValues(t, 1, a.Seq)
			require.Equal(t, "test", a.ClientName)
			sum, _, _ := event.Digest(a.Resource.Contents)
			require.Equal(t, sum, a.ContentSHA256)

			ms.Update("test://a", "a2")
			u := h.next(t, is("test://a", event.ReasonUpdate, "a2"))
			require.EqualValues(t, 2, u.Seq)
			require.NotEqual(t, a.ID, u.ID)
		})
	}
}
