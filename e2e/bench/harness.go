package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/publish"
)

// natsEnv is an in-process NATS server with the watcher's stream and a
// connection for the consumer.
type natsEnv struct {
	ns *server.Server
	nc *nats.Conn
	js jetstream.JetStream
}

// startNATS starts NATS with JetStream stored under dir and creates the
// stream the watcher publishes to (as the watcher would). The caller must
// call Close.
func startNATS(dir string) (*natsEnv, error) {
	ns, err := publish.StartEmbedded(config.Embedded{Host: "127.0.0.1", Port: -1, StoreDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	n := &natsEnv{ns: ns}
	if n.nc, err = nats.Connect(ns.ClientURL()); err != nil {
		n.Close()
		return nil, err
	}
	if n.js, err = jetstream.New(n.nc); err != nil {
		n.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.js.CreateStream(ctx, jetstream.StreamConfig{Name: "MCP_EVENTS", Subjects: []string{"mcp.events.>"},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
		n.Close()
		return nil, fmt.Errorf("create stream: %w", err)
	}
	return n, nil
}

// URL is the client URL.
func (n *natsEnv) URL() string { return n.ns.ClientURL() }

// Close closes the connection and shuts the server down.
func (n *natsEnv) Close() {
	if n.nc != nil {
		n.nc.Close()
	}
	n.ns.Shutdown()
	n.ns.WaitForShutdown()
}

// arrival is one event as the consumer saw it.
type arrival struct {
	At      time.Time
	Server  string
	URI     string
	Reason  event.Reason
	Version uint64 // from the content's "v<n> " prefix; 0 when absent
}

// collector counts what the consumer receives and lets a scenario wait for
// a condition on it. hook, when set, sees every arrival under the lock.
type collector struct {
	mu       sync.Mutex
	total    int
	byReason map[event.Reason]int
	last     time.Time
	hook     func(a arrival)
	changed  chan struct{}
	cc       jetstream.ConsumeContext
}

// consume starts an ordered consumer of the stream's new messages. The
// caller must call stop.
func (n *natsEnv) consume(hook func(a arrival)) (*collector, error) {
	c := &collector{byReason: map[event.Reason]int{}, hook: hook, changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := n.js.OrderedConsumer(ctx, "MCP_EVENTS", jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	c.cc, err = cons.Consume(func(m jetstream.Msg) {
		h := m.Headers()
		a := arrival{At: time.Now(), Server: h.Get(event.HeaderServer), URI: h.Get(event.HeaderURI),
			Reason: event.Reason(h.Get(event.HeaderReason)), Version: versionOf(m.Data())}
		c.mu.Lock()
		c.total++
		c.byReason[a.Reason]++
		c.last = a.At
		if c.hook != nil {
			c.hook(a)
		}
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}, jetstream.PullMaxMessages(4096))
	if err != nil {
		return nil, fmt.Errorf("consume: %w", err)
	}
	return c, nil
}

// stop ends the consumer.
func (c *collector) stop() { c.cc.Stop() }

// count returns the events received with reason r ("" for all).
func (c *collector) count(r event.Reason) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r == "" {
		return c.total
	}
	return c.byReason[r]
}

// lastAt is when the latest event arrived.
func (c *collector) lastAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// wait blocks until cond (called under the lock) holds or timeout passes.
func (c *collector) wait(timeout time.Duration, what string, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond) // conditions on other state (server counters)
	defer tick.Stop()
	for {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-c.changed:
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("timed out after %s waiting for %s (%d events received)", timeout, what, c.count(""))
		}
	}
}

// versionOf finds the first `"text":"v<n> ` in an encoded event.
func versionOf(data []byte) uint64 {
	i := bytes.Index(data, []byte(`"text":"v`))
	if i < 0 {
		return 0
	}
	rest := data[i+len(`"text":"v`):]
	j := bytes.IndexByte(rest, ' ')
	if j < 0 {
		return 0
	}
	v, _ := strconv.ParseUint(string(rest[:j]), 10, 64)
	return v
}

// httpEntries are the watcher config's servers for bench servers over
// Streamable HTTP: every resource subscribed with the defaults.
func httpEntries(servers []*benchServer) map[string]any {
	srvs := map[string]any{}
	for _, s := range servers {
		srvs[s.name] = map[string]any{"transport": config.TransportStreamableHTTP, "url": s.URL(), "subscriptions": subscriptions(s.URIs())}
	}
	return srvs
}

// subscriptions subscribes every URI with the defaults.
func subscriptions(uris []string) []map[string]any {
	subs := make([]map[string]any, len(uris))
	for i, u := range uris {
		subs[i] = map[string]any{"uri": u}
	}
	return subs
}

// writeConfig writes a watcher config (JSON) with the servers entries into
// dir, events to natsURL.
func writeConfig(dir, natsURL string, entries map[string]any) (string, error) {
	cfg := map[string]any{"nats": map[string]any{"url": natsURL}, "servers": entries}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "watcher.json")
	return path, os.WriteFile(path, b, 0o600)
}

// startWatcher runs the watcher in a child process over the servers entries.
func startWatcher(dir, natsURL string, entries map[string]any, extraEnv ...string) (*childProc, error) {
	path, err := writeConfig(dir, natsURL, entries)
	if err != nil {
		return nil, err
	}
	return startChild("watcher", watcherParams{Config: path}, extraEnv...)
}

// startBare starts the baseline child and waits until its clients are
// connected; run it with runBareNow.
func startBare(p bareParams) (*childProc, error) {
	c, err := startChild("bare", p)
	if err != nil {
		return nil, err
	}
	if err := c.call("", nil); err != nil { // {"ready":true}
		c.Close()
		return nil, err
	}
	return c, nil
}

// runBare runs a baseline child to the end and returns what it measured.
func runBareChildOnce(p bareParams) (bareResult, error) {
	c, err := startBare(p)
	if err != nil {
		return bareResult{}, err
	}
	var res bareResult
	err = c.call("run", &res)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return res, err
}

// bareFor is the baseline over servers with conc readers per server.
func bareFor(servers []*benchServer, conc int, seconds, rate float64, natsURL string, syncPub bool) bareParams {
	p := bareParams{Concurrency: conc, Seconds: seconds, Rate: rate, NATS: natsURL, SyncPublish: syncPub}
	for _, s := range servers {
		p.URLs = append(p.URLs, s.URL())
		p.URIs = append(p.URIs, s.URIs())
	}
	return p
}

// runBaseline runs the bare child once against servers with a NATS server
// of its own (in a fresh subdirectory called name). On error it stops the
// servers, so callers just return.
func (e *env) runBaseline(name string, servers []*benchServer, conc int, seconds, rate float64, syncPub bool) (bareResult, error) {
	dir, err := e.subdir(name)
	if err != nil {
		stopServers(servers)
		return bareResult{}, err
	}
	bn, err := startNATS(dir)
	if err != nil {
		stopServers(servers)
		return bareResult{}, err
	}
	base, err := runBareChildOnce(bareFor(servers, conc, seconds, rate, bn.URL(), syncPub))
	bn.Close()
	if err != nil {
		stopServers(servers)
		return bareResult{}, fmt.Errorf("baseline: %w", err)
	}
	return base, nil
}
