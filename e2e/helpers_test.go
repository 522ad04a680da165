package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
)

// waitFor bounds every wait of these tests for something to happen.
const waitFor = 20 * time.Second

// M is a config (or part of one) shaped like the file.
type M = map[string]any

// repoRoot is the absolute path of the module root.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// startNATS runs an in-process NATS server with JetStream on a free
// 127.0.0.1 port, storing into a t.TempDir(), and returns its client URL. It
// is shut down when the test ends.
func startNATS(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
	})
	require.NoError(t, err)
	ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second), "the test NATS server did not become ready")
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns.ClientURL()
}

// baseConfig returns a config map that publishes to natsURL with JetStream
// (stream MCP_EVENTS on mcp.events.>), reconnects fast, and has no servers.
// Tests add servers with withServer and change what they need.
func baseConfig(natsURL string) M {
	return M{
		"nats": M{
			"url":       natsURL,
			"jetstream": M{"enabled": true, "stream": "MCP_EVENTS", "subjects": []string{"mcp.events.>"}, "create_stream": true},
		},
		"subject":          "mcp.events.{server}.{reason}",
		"reconnect":        M{"initial_interval": "50ms", "max_interval": "500ms"},
		"shutdown_timeout": "5s",
		"servers":          M{},
	}
}

// withServer adds the server entry s under name to cfg and returns cfg.
func withServer(cfg M, name string, s M) M {
	cfg["servers"].(M)[name] = s
	return cfg
}

// subs returns subscription entries for uris, with every default.
func subs(uris ...string) []M {
	out := make([]M, len(uris))
	for i, u := range uris {
		out[i] = M{"uri": u}
	}
	return out
}

// loadConfig writes cfg as a JSON file and loads it with config.Load (so
// defaults, interpolation and validation apply as for a user), with environ
// as the environment. It fails the test on any problem.
func loadConfig(t testing.TB, cfg M, environ ...string) *config.Config {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "  ")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "watcher.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	c, err := config.Load(path, environ)
	require.NoError(t, err, "config:\n%s", b)
	return c
}

// logs is a concurrency-safe log sink tests can search. With
// WATCHER_TEST_LOG set it also copies every line to stderr.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if os.Getenv("WATCHER_TEST_LOG") != "" {
		os.Stderr.Write(p)
	}
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitLine waits until a logged line contains every one of parts, and returns it.
func (l *logs) waitLine(t testing.TB, parts ...string) string {
	t.Helper()
	var found string
	require.Eventuallyf(t, func() bool {
		for _, line := range strings.Split(l.String(), "\n") {
			if containsAll(line, parts) {
				found = line
				return true
			}
		}
		return false
	}, waitFor, 10*time.Millisecond, "no log line with %q; logs:\n%s", parts, l)
	return found
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// running is an App running in a goroutine of the test.
type running struct {
	*app.App
	Logs   *logs
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// runApp builds an App from cfg (opts.Config and opts.Logger are set here;
// pass other options in opts) and runs it until the test ends, when it is
// cancelled and must return nil within waitFor.
func runApp(t testing.TB, cfg *config.Config, opts app.Options) *running {
	t.Helper()
	r := &running{Logs: &logs{}, done: make(chan error, 1)}
	opts.Config = cfg
	opts.Logger = slog.New(slog.NewTextHandler(r.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := app.New(opts)
	require.NoError(t, err)
	r.App = a
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		require.NoError(t, r.stop(t), "App.Run after cancel")
		if t.Failed() {
			t.Logf("watcher logs:\n%s", r.Logs)
		}
	})
	return r
}

// stop cancels the App and waits for Run to return, failing the test after
// waitFor; it returns Run's error. Safe to call more than once.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case r.err = <-r.done:
		case <-time.After(waitFor):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("App.Run did not return within %s of cancel; goroutines:\n%s", waitFor, buf[:n])
		}
	})
	return r.err
}

// waitReady waits until every server's session is up and NATS is usable.
func (r *running) waitReady(t testing.TB) {
	t.Helper()
	require.Eventuallyf(t, r.Ready, waitFor, 10*time.Millisecond, "the watcher did not become ready; status: %+v", r.Status())
}

// msg is one event as a consumer sees it.
type msg struct {
	Subject string
	Header  nats.Header
	Data    []byte
	Ev      event.MCPResourceEvent
}

// text returns the text of the event's first content item, or "".
func (m *msg) text() string {
	if m.Ev.Resource == nil || len(m.Ev.Resource.Contents) == 0 {
		return ""
	}
	return m.Ev.Resource.Contents[0].Text
}

// collector gathers decoded events. Events of different URIs arrive in any
// order, so next keeps what it skipped for later calls.
type collector struct {
	t    testing.TB
	ch   chan *msg
	seen []*msg
}

func newCollector(t testing.TB) *collector {
	return &collector{t: t, ch: make(chan *msg, 10000)}
}

func (c *collector) add(subject string, h nats.Header, data []byte) {
	m := &msg{Subject: subject, Header: h, Data: append([]byte(nil), data...)}
	if err := json.Unmarshal(data, &m.Ev); err != nil {
		c.t.Errorf("event on %s is not valid JSON: %v: %s", subject, err, data)
		return
	}
	select {
	case c.ch <- m:
	default:
		c.t.Errorf("collector full; dropping the event on %s", subject)
	}
}

// next returns the first event (received earlier and not yet returned, or
// arriving within waitFor) that pred accepts; it fails the test otherwise.
func (c *collector) next(pred func(*msg) bool) *msg {
	c.t.Helper()
	for i, m := range c.seen {
		if pred(m) {
			c.seen = append(c.seen[:i], c.seen[i+1:]...)
			return m
		}
	}
	deadline := time.After(waitFor)
	for {
		select {
		case m := <-c.ch:
			if pred(m) {
				return m
			}
			c.seen = append(c.seen, m)
		case <-deadline:
			var got []string
			for _, m := range c.seen {
				got = append(got, m.Subject+" "+m.Ev.URI+" "+string(m.Ev.Reason)+" "+strings.TrimSpace(m.text()))
			}
			c.t.Fatalf("no matching event within %s; unmatched events:\n%s", waitFor, strings.Join(got, "\n"))
			return nil
		}
	}
}

// drain moves every event received so far into the kept ones and returns
// all the kept ones (oldest first) without consuming them.
func (c *collector) drain() []*msg {
	for {
		select {
		case m := <-c.ch:
			c.seen = append(c.seen, m)
		default:
			return c.seen
		}
	}
}

// is matches an event of uri with reason; a non-empty text must equal the
// first content item's text.
func is(uri string, reason event.Reason, text string) func(*msg) bool {
	return func(m *msg) bool {
		return m.Ev.URI == uri && m.Ev.Reason == reason && (text == "" || m.text() == text)
	}
}

// consume reads every event of the JetStream stream (default MCP_EVENTS)
// from its start with an ordered consumer, once the watcher has created the
// stream. It stops when the test ends.
func consume(t testing.TB, natsURL string, stream ...string) *collector {
	t.Helper()
	name := "MCP_EVENTS"
	if len(stream) > 0 {
		name = stream[0]
	}
	nc, err := nats.Connect(natsURL)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	var s jetstream.Stream
	require.Eventuallyf(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s, err = js.Stream(ctx, name)
		return err == nil
	}, waitFor, 20*time.Millisecond, "stream %s was not created", name)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	require.NoError(t, err)
	c := newCollector(t)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		c.add(m.Subject(), m.Headers(), m.Data())
	})
	require.NoError(t, err)
	t.Cleanup(cc.Stop)
	return c
}

// subscribeCore collects every message on subject with a core NATS
// subscription (for jetstream.enabled: false). Subscribe before the events
// are published.
func subscribeCore(t testing.TB, natsURL, subject string) *collector {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	c := newCollector(t)
	_, err = nc.Subscribe(subject, func(m *nats.Msg) { c.add(m.Subject, m.Header, m.Data) })
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	return c
}

var (
	demoOnce sync.Once
	demoBin  string
	demoErr  error
	// binDir holds binaries built by the tests; TestMain removes it.
	binDir string
)

// demoServer returns the path of the examples/demoserver binary, built once
// per test binary run.
func demoServer(t testing.TB) string {
	t.Helper()
	demoOnce.Do(func() {
		demoBin = filepath.Join(binDir, "demoserver")
		cmd := exec.Command("go", "build", "-o", demoBin, "./examples/demoserver")
		cmd.Dir = repoRoot()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			demoErr = err
			demoBin = out.String()
		}
	})
	if demoErr != nil {
		t.Fatalf("go build ./examples/demoserver: %v\n%s", demoErr, demoBin)
	}
	return demoBin
}

// demoFiles writes files (name -> content) into a new temp directory and
// returns its absolute path.
func demoFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

// fileURI is the URI the demo server gives the file name in dir.
func fileURI(dir, name string) string { return "file://" + filepath.ToSlash(filepath.Join(dir, name)) }

// demoServerEntry is a stdio server entry running the demo server over dir.
func demoServerEntry(t testing.TB, dir string, uris ...string) M {
	return M{"command": demoServer(t), "args": []string{"-dir", dir}, "subscriptions": subs(uris...)}
}

// writeFile replaces the file name in dir with content at once (by a
// rename), so the demo server never serves it truncated: os.WriteFile
// truncates first, and a read between the two steps publishes "".
func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
}
