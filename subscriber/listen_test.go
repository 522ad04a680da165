package subscriber_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/subscriber"
)

const modern = "2026-07-28"

// logBuf is a concurrency-safe log sink for tests that check log lines.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runLogged is run with the Watcher's logs kept in the returned buffer.
func runLogged(t *testing.T, srv config.Server) (*harness, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	h := start(t, subscriber.Options{Server: srv, AckTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))}, func() {
		if t.Failed() {
			t.Logf("watcher log:\n%s", lb.String())
		}
	})
	return h, lb
}

// uriStatus waits until pred holds for uri's status and returns it.
func uriStatus(t *testing.T, w *subscriber.Watcher, uri string, pred func(subscriber.URIStatus) bool) subscriber.URIStatus {
	t.Helper()
	var got subscriber.URIStatus
	require.Eventuallyf(t, func() bool {
		for _, u := range w.Status().URIs {
			if u.URI == uri {
				got = u
				return pred(u)
			}
		}
		return false
	}, 15*time.Second, 10*time.Millisecond, "status of %s never matched; last: %+v", uri, &got)
	return got
}

func watched(u subscriber.URIStatus) bool    { return u.Watched }
func hasProblem(u subscriber.URIStatus) bool { return !u.Watched && u.Problem != "" }

// updater is a test server that changes a resource and notifies.
type updater interface {
	Set(uri, text string)
	Update(uri, text string)
	Restart()
}

// checkListenLifecycle runs start, update and (after a server restart that
// drops the listen stream) reconnect events against a modern server.
func checkListenLifecycle(t *testing.T, s updater, url string) {
	s.Set("test://a", "a1")
	s.Set("test://b", "b1")
	h, _ := runLogged(t, config.Server{Transport: config.TransportStreamableHTTP, URL: url, Subscriptions: subs("test://a", "test://b")})
	h.next(t, is("test://a", event.ReasonStart, "a1"))
	h.next(t, is("test://b", event.ReasonStart, "b1"))
	require.Equal(t, modern, h.w.Status().Protocol)
	uriStatus(t, h.w, "test://b", watched)

	s.Update("test://a", "a2")
	h.next(t, is("test://a", event.ReasonUpdate, "a2"))
	s.Update("test://b", "b2")
	h.next(t, is("test://b", event.ReasonUpdate, "b2"))

	s.Set("test://a", "a3")
	s.Restart() // drops the listen stream; the watcher re-listens
	h.next(t, is("test://a", event.ReasonReconnect, "a3"))
	h.next(t, is("test://b", event.ReasonReconnect, "b2"))
	require.Equal(t, modern, h.w.Status().Protocol)
	// The new stream carries updates (once it is open: the reconnect read
	// covers what changed before).
	updateUntil(t, h, s, "test://b", "b4")
}

func TestListenMCPGoModern(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{})
	checkListenLifecycle(t, ms, ms.URL)
}

func TestListenGoSDKStateless(t *testing.T) {
	s := mcptest.StartSDK(t, mcptest.SDKOptions{})
	checkListenLifecycle(t, s, s.URL)
}

// A stateful go-sdk server answers server/discover with legacy versions
// only; mcp-go would still go modern (the discover bug). The watcher must
// notice and use resources/subscribe.
func TestListenGoSDKStatefulFallsBackToLegacy(t *testing.T) {
	s := mcptest.StartSDK(t, mcptest.SDKOptions{Stateful: true})
	s.Set("test://a", "a1")
	s.Set("test://b", "b1")
	h, lb := runLogged(t, config.Server{Transport: config.TransportStreamableHTTP, URL: s.URL, Subscriptions: subs("test://a", "test://b")})
	h.next(t, is("test://a", event.ReasonStart, "a1"))
	h.next(t, is("test://b", event.ReasonStart, "b1"))
	require.NotEqual(t, modern, h.w.Status().Protocol)
	require.Contains(t, lb.String(), "using the legacy handshake")
	// Legacy notifications travel on the GET stream, which mcp-go opens in
	// the background: an update sent before it is up is lost (go-sdk keeps
	// no queue), so notify until one arrives.
	updateUntil(t, h, s, "test://a", "a2")
}

// updateUntil changes uri to text and notifies until the update event
// arrives.
func updateUntil(t *testing.T, h *harness, s updater, uri, text string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.Update(uri, text)
		for {
			select {
			case ev := <-h.events:
				if is(uri, event.ReasonUpdate, text)(ev) {
					return true
				}
			default:
				return false
			}
		}
	}, 15*time.Second, 100*time.Millisecond)
}

// The server leaves a URI out of its acknowledgement: that URI is reported
// (status and a log line naming server and URI), the others proceed.
func TestListenUnhonouredURI(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{Refuse: []string{"test://refused"}})
	ms.Set("test://a", "a1")
	ms.Set("test://refused", "r1")
	h, lb := runLogged(t, config.Server{Name: "modern-srv", Transport: config.TransportStreamableHTTP, URL: ms.URL,
		Subscriptions: subs("test://a", "test://refused")})
	h.next(t, is("test://a", event.ReasonStart, "a1"))
	u := uriStatus(t, h.w, "test://refused", hasProblem)
	require.Contains(t, u.Problem, "did not acknowledge")
	uriStatus(t, h.w, "test://a", watched)
	logLine := findLine(lb.String(), "test://refused")
	require.Contains(t, logLine, "server=modern-srv")
	require.Contains(t, logLine, "uri=test://refused")

	ms.Update("test://a", "a2")
	h.next(t, is("test://a", event.ReasonUpdate, "a2"))
	for _, ev := range h.seen {
		require.NotEqual(t, "test://refused", ev.URI, "an unhonoured URI must not be read")
	}
}

// Every URI refused: the server acknowledges nothing and ends the stream at
// once. The session must stay up, reporting the URIs, not loop re-dialling.
func TestListenNothingHonoured(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{Refuse: []string{"test://a"}})
	ms.Set("test://a", "a1")
	h, _ := runLogged(t, config.Server{Transport: config.TransportStreamableHTTP, URL: ms.URL, Subscriptions: subs("test://a")})
	uriStatus(t, h.w, "test://a", hasProblem)
	require.Eventually(t, h.w.Ready, 10*time.Second, 10*time.Millisecond)
	sessions := h.w.Status().State.Sessions
	// A re-dial loop would show within a few backoff periods.
	require.Never(t, func() bool { return h.w.Status().State.Sessions != sessions || !h.w.Ready() },
		500*time.Millisecond, 10*time.Millisecond)
}

// One bad URI makes a go-sdk server fail the whole listen with
// INVALID_PARAMS: the watcher retries without it and reports it.
func TestListenInvalidParamsDropsOffender(t *testing.T) {
	for _, tc := range []struct {
		name    string
		message func(uri string) string
	}{
		{"error names the URI", func(uri string) string { return fmt.Sprintf("cannot subscribe to %s", uri) }},
		{"error does not name the URI", func(string) string { return "no such resource" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcptest.StartSDK(t, mcptest.SDKOptions{Reject: func(uri string) error {
				if strings.Contains(uri, "bad") {
					return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: tc.message(uri)}
				}
				return nil
			}})
			s.Set("test://a", "a1")
			s.Set("test://b", "b1")
			h, lb := runLogged(t, config.Server{Name: "sdk", Transport: config.TransportStreamableHTTP, URL: s.URL,
				Subscriptions: subs("test://a", "test://bad", "test://b")})
			h.next(t, is("test://a", event.ReasonStart, "a1"))
			h.next(t, is("test://b", event.ReasonStart, "b1"))
			u := uriStatus(t, h.w, "test://bad", hasProblem)
			require.Contains(t, u.Problem, "rejected")
			require.Contains(t, findLine(lb.String(), "uri=test://bad"), "server=sdk")
			s.Update("test://b", "b2")
			h.next(t, is("test://b", event.ReasonUpdate, "b2"))
		})
	}
}

// A modern server without resources.subscribe: listening for resource
// updates is pointless, so no URI is requested and each is reported.
func TestListenNoSubscribeCapability(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{NoSubscribe: true})
	ms.Set("test://a", "a1")
	h, _ := runLogged(t, config.Server{Transport: config.TransportStreamableHTTP, URL: ms.URL, Subscriptions: subs("test://a")})
	u := uriStatus(t, h.w, "test://a", hasProblem)
	require.Contains(t, u.Problem, "resources.subscribe")
	require.Eventually(t, h.w.Ready, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, modern, h.w.Status().Protocol)
}

// method: subscriptions/listen against a legacy server is an error for that
// subscription, not a silent fallback.
func TestListenForcedOnLegacyServer(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{Legacy: true})
	ms.Set("test://a", "a1")
	ms.Set("test://b", "b1")
	srv := config.Server{Transport: config.TransportStreamableHTTP, URL: ms.URL, Subscriptions: subs("test://a", "test://b")}
	srv.Subscriptions[0].Method = config.MethodListen
	h, _ := runLogged(t, srv)
	h.next(t, is("test://b", event.ReasonStart, "b1"))
	u := uriStatus(t, h.w, "test://a", hasProblem)
	require.Contains(t, u.Problem, "subscriptions/listen")
	ms.Update("test://b", "b2")
	h.next(t, is("test://b", event.ReasonUpdate, "b2"))
}

func findLine(log, substr string) string {
	for line := range strings.Lines(log) {
		if strings.Contains(line, substr) {
			return line
		}
	}
	return ""
}

// silentListenServer speaks just enough 2026-07-28 for a client to connect,
// and holds every subscriptions/listen open without acknowledging it.
func silentListenServer(t *testing.T) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&msg) != nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		switch msg.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["%s"],`+
				`"capabilities":{"resources":{"subscribe":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"silent","version":"1"}}}}`, msg.ID, modern)
		case "subscriptions/listen":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// A listen that is never acknowledged fails the attempt after the ack
// timeout (the supervisor then tries again); nothing is read meanwhile.
func TestListenAckTimeout(t *testing.T) {
	url := silentListenServer(t)
	h, _ := runLogged(t, config.Server{Name: "silent", Transport: config.TransportStreamableHTTP, URL: url, Subscriptions: subs("test://a")})
	require.Eventually(t, func() bool {
		st := h.w.Status().State
		return st.Attempt >= 2 && strings.Contains(st.LastError, "no acknowledgement within 2s")
	}, 20*time.Second, 10*time.Millisecond, "status: %+v", h.w.Status())
	require.False(t, h.w.Ready())
	require.Empty(t, h.events)
}
