package subscriber

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
)

// lossRecorder collects what a lossWatcher reports.
type lossRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *lossRecorder) onLoss(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *lossRecorder) get() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// TestLossWatcher checks each HTTP answer the RoundTripper must (or must
// not) report as a lost session.
func TestLossWatcher(t *testing.T) {
	const everything400 = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`
	const other400 = `{"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid params"},"id":1}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/400-session":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, everything400)
		case "/400-other":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, other400)
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": hello\n\n") // then the server ends the stream
		}
	}))
	t.Cleanup(srv.Close)
	refused := "http://" + closedAddr(t)

	for _, tc := range []struct {
		name     string
		method   string
		url      string
		session  bool
		cancel   bool   // cancel the request context before reading the body
		twice    bool   // send the request twice
		wantLoss string // "" = no loss may be reported
		wantBody string // the caller must still read this body
	}{
		{name: "404 for our session", method: "POST", url: "/404", session: true, wantLoss: "HTTP 404"},
		{name: "404 without a session", method: "POST", url: "/404"},
		{name: "400 about the session", method: "POST", url: "/400-session", session: true,
			wantLoss: "No valid session ID provided", wantBody: everything400},
		{name: "400 about something else", method: "POST", url: "/400-other", session: true, wantBody: other400},
		{name: "400 about the session, but we sent none", method: "POST", url: "/400-session", wantBody: everything400},
		{name: "GET stream ends", method: "GET", url: "/stream", session: true, wantLoss: "server-to-client stream ended"},
		{name: "GET stream we cancelled", method: "GET", url: "/stream", session: true, cancel: true},
		{name: "GET stream opens a second time", method: "GET", url: "/stream", session: true, twice: true, wantLoss: "reconnected"},
		{name: "GET refused", method: "GET", url: refused, session: true, wantLoss: "server-to-client stream"},
		{name: "POST refused (mcp-go reports it)", method: "POST", url: refused, session: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &lossRecorder{}
			lw := &lossWatcher{base: http.DefaultTransport.(*http.Transport).Clone(), onLoss: rec.onLoss, maxBody: 1 << 20}
			t.Cleanup(lw.base.(*http.Transport).CloseIdleConnections)
			u := tc.url
			if strings.HasPrefix(u, "/") {
				u = srv.URL + u
			}
			n := 1
			if tc.twice {
				n = 2
			}
			for i := 0; i < n; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				req, err := http.NewRequestWithContext(ctx, tc.method, u, strings.NewReader("{}"))
				require.NoError(t, err)
				if tc.session {
					req.Header.Set("Mcp-Session-Id", "s1")
				}
				resp, err := lw.RoundTrip(req)
				if err == nil {
					if tc.cancel {
						cancel()
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if tc.wantBody != "" {
						require.Equal(t, tc.wantBody, string(body))
					}
				}
				cancel()
				if i == 0 && tc.twice {
					rec.mu.Lock()
					rec.errs = nil // the first stream's end is not what this case checks
					rec.mu.Unlock()
				}
			}
			got := rec.get()
			if tc.wantLoss == "" {
				require.Empty(t, got)
				return
			}
			require.NotEmpty(t, got, "no loss reported")
			require.ErrorContains(t, errors.Join(got...), tc.wantLoss)
		})
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// fakeSession is a Session whose Ping runs into a loss the transport
// already reported (as lossWatcher does for a 400 or 404).
type fakeSession struct {
	done chan struct{}
	err  error
}

func (f *fakeSession) Protocol() string                                   { return "2025-11-25" }
func (f *fakeSession) Modern() bool                                       { return false }
func (f *fakeSession) CanSubscribe() bool                                 { return true }
func (f *fakeSession) Subscribe(context.Context, string) error            { return nil }
func (f *fakeSession) Listen(context.Context, []string) ([]string, error) { return nil, nil }
func (f *fakeSession) Read(context.Context, string) ([]event.Content, error) {
	return nil, ErrNotFound
}
func (f *fakeSession) Done() <-chan struct{} { return f.done }
func (f *fakeSession) Close() error          { return nil }
func (f *fakeSession) Err() error {
	select {
	case <-f.done:
		return f.err
	default:
		return nil
	}
}
func (f *fakeSession) Ping(context.Context) error {
	f.err = errors.New("the server rejected our session (HTTP 400: Bad Request)")
	close(f.done)
	return errors.New("Bad Request: No valid session ID provided")
}

// TestKeepaliveReportsTheLoss: when a keepalive ping fails because the
// session was lost, the session's reason is reported, not the ping's error.
func TestKeepaliveReportsTheLoss(t *testing.T) {
	w := New(Options{Server: config.Server{Name: "s", PingInterval: time.Millisecond, TimeoutSeconds: 5},
		Sink: SinkFunc(func(context.Context, *event.MCPResourceEvent) error { return nil })})
	err := w.hold(context.Background(), &fakeSession{done: make(chan struct{})})
	require.ErrorContains(t, err, "HTTP 400")
}

// TestStdioKillReportsExit: a SIGKILLed stdio child is reported with its
// exit status and stderr tail even though its listen stream ends first.
func TestStdioKillReportsExit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "demoserver")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", bin, "./examples/demoserver")
	build.Dir = filepath.Dir(filepath.Dir(file))
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./examples/demoserver: %s", out)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a1"), 0o644))
	uri := "file://" + filepath.Join(dir, "a.txt")

	for _, legacy := range []bool{false, true} {
		t.Run("legacy="+strconv.FormatBool(legacy), func(t *testing.T) {
			dial := NewDialer(DialOptions{Logger: discard(), Legacy: legacy, Server: config.Server{
				Name: "files", Transport: config.TransportStdio, Command: bin, Args: []string{"-dir", dir},
				TimeoutSeconds: 10, MaxContentBytes: 1 << 20,
			}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sess, err := dial(ctx, func(string) {})
			require.NoError(t, err)
			defer sess.Close()
			require.Equal(t, !legacy, sess.Modern())
			if sess.Modern() {
				_, err = sess.Listen(ctx, []string{uri})
			} else {
				err = sess.Subscribe(ctx, uri)
			}
			require.NoError(t, err)

			pid := sess.(*mcpSession).child.cmd.Process.Pid
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			select {
			case <-sess.Done():
			case <-ctx.Done():
				t.Fatal("the session was not reported lost after SIGKILL")
			}
			require.ErrorContains(t, sess.Err(), "signal: killed")
			require.ErrorContains(t, sess.Err(), "stderr tail")
			require.ErrorContains(t, sess.Err(), "serving files")
		})
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
