package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// nats.go v1.55 jetstream: when the connection closes right after the
		// first async publish, resetPendingAcksOnReconnect can read a status
		// channel already cleared and block on a nil channel for ever. It is
		// nats.go's goroutine, one per JetStream context, not ours.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

// startServer runs an in-process NATS server with JetStream; mutate may
// change its options. It is shut down when the test ends.
func startServer(t testing.TB, storeDir string, port int, mutate func(*server.Options)) *server.Server {
	t.Helper()
	opts := &server.Options{
		Host:      "127.0.0.1",
		Port:      port,
		JetStream: true,
		StoreDir:  storeDir,
		NoSigs:    true,
		NoLog:     true,
	}
	if mutate != nil {
		mutate(opts)
	}
	ns, err := server.NewServer(opts)
	require.NoError(t, err)
	ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second), "nats server not ready")
	t.Cleanup(func() { stopServer(ns) })
	return ns
}

func stopServer(ns *server.Server) {
	ns.Shutdown()
	ns.WaitForShutdown()
}

// jsConfig is the default JetStream configuration of the tests.
func jsConfig() config.NATS {
	return config.NATS{JetStream: config.JetStream{
		Enabled:         true,
		Stream:          "MCP_EVENTS",
		Subjects:        []string{"mcp.events.>"},
		CreateStream:    true,
		DuplicateWindow: 2 * time.Minute,
	}}
}

// logBuf is a concurrency-safe log sink for asserting on log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testOptions returns publisher options for url with fast retries.
func testOptions(url string, logs *logBuf) Options {
	var w interface{ Write([]byte) (int, error) } = logs
	if logs == nil {
		w = &logBuf{}
	}
	return Options{
		NATS:            jsConfig(),
		DefaultSubject:  "mcp.events.{server}.{reason}",
		URL:             url,
		ShutdownTimeout: 5 * time.Second,
		Logger:          slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer:      prometheus.NewRegistry(),
		reconnectWait:   20 * time.Millisecond,
		retryBase:       10 * time.Millisecond,
		retryMax:        200 * time.Millisecond,
		reportEvery:     50 * time.Millisecond,
	}
}

// running is a publisher whose Run goroutine the test owns.
type running struct {
	*Publisher
	cancel context.CancelFunc
	done   chan error
}

// startPublisher builds and runs a publisher; it is stopped (and Run's
// return awaited) when the test ends if the test did not stop it.
func startPublisher(t testing.TB, opts Options) *running {
	t.Helper()
	p, err := New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Publisher: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it to return.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

func (r *running) waitReady(t testing.TB) {
	t.Helper()
	require.Eventually(t, r.Ready, 10*time.Second, 5*time.Millisecond, "publisher not ready")
}

func (r *running) waitDrained(t testing.TB, timeout time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return r.Stats().Pending == 0 }, timeout, 5*time.Millisecond,
		"events still pending")
}

var idSeq struct {
	sync.Mutex
	n int
}

// newEvent makes an event with a fresh id.
func newEvent(server, uri string, seq uint64, text string) *event.MCPResourceEvent {
	idSeq.Lock()
	idSeq.n++
	id := fmt.Sprintf("ev-%d", idSeq.n)
	idSeq.Unlock()
	contents := []event.Content{{URI: uri, MIMEType: "text/plain", Text: text}}
	sum, n, _ := event.Digest(contents)
	reason := event.ReasonUpdate
	if seq == 1 {
		reason = event.ReasonStart
	}
	return &event.MCPResourceEvent{
		ID: id, ClientName: server, URI: uri, Reason: reason,
		Resource: &event.Resource{Contents: contents},
		Time:     time.Now().UTC(), Seq: seq, ContentSHA256: sum, ContentBytes: n,
	}
}

// stored is one message read back from the stream.
type stored struct {
	seq    uint64
	header nats.Header
	ev     event.MCPResourceEvent
}

// readStream returns every message of stream in order, through a separate
// connection.
func readStream(t testing.TB, url, stream string, connOpts ...nats.Option) []stored {
	t.Helper()
	nc, err := nats.Connect(url, connOpts...)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	var out []stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		require.NoError(t, err)
		var ev event.MCPResourceEvent
		require.NoError(t, json.Unmarshal(m.Data, &ev), "message %d", seq)
		out = append(out, stored{seq: seq, header: m.Header, ev: ev})
	}
	return out
}

// checkStream asserts the outage/kill invariants: ids unique, per URI seq
// strictly increasing in stream order, and the last stored event of each
// URI is final[uri].
func checkStream(t *testing.T, msgs []stored, final map[key]uint64) {
	t.Helper()
	ids := map[string]uint64{}
	last := map[key]uint64{}
	for _, m := range msgs {
		if prev, ok := ids[m.ev.ID]; ok {
			t.Fatalf("id %s stored twice: stream seq %d and %d", m.ev.ID, prev, m.seq)
		}
		ids[m.ev.ID] = m.seq
		k := key{m.ev.ClientName, m.ev.URI}
		if m.ev.Seq <= last[k] {
			t.Fatalf("%s %s: seq %d stored after seq %d (stream seq %d)", k.server, k.uri, m.ev.Seq, last[k], m.seq)
		}
		last[k] = m.ev.Seq
		require.Equal(t, m.ev.ID, m.header.Get(event.HeaderMsgID))
	}
	for k, want := range final {
		require.Equal(t, want, last[k], "final state of %s %s", k.server, k.uri)
	}
}

func uriN(i int) string { return fmt.Sprintf("file:///docs/r%02d.md", i) }

func hasLine(logs *logBuf, parts ...string) bool {
	for _, line := range strings.Split(logs.String(), "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok && line != "" {
			return true
		}
	}
	return false
}
