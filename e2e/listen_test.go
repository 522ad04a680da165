package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/e2e/peers"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/subscriber"
)

// The tests of protocol 2026-07-28 (subscriptions/listen) and of the
// per-server choice between it and resources/subscribe.

const lnModern = "2026-07-28"

// lnFast is a quick reconnect policy for these tests.
var lnFast = M{"initial_interval": "50ms", "max_interval": "300ms", "jitter": 0}

// lnUpdater is a test server whose resources the test changes.
type lnUpdater interface {
	Set(uri, text string)
	Update(uri, text string)
	Restart()
}

// lnWaitURI waits until server's uri status satisfies ok and returns it.
func lnWaitURI(t *testing.T, r *running, server, uri string, ok func(subscriber.URIStatus) bool) subscriber.URIStatus {
	t.Helper()
	var u subscriber.URIStatus
	require.Eventuallyf(t, func() bool {
		u = uriStatus(t, r, server, uri)
		return ok(u)
	}, waitFor, 10*time.Millisecond, "status of %s %s never matched; last %+v", server, uri, &u)
	return u
}

func lnProblem(u subscriber.URIStatus) bool { return !u.Watched && u.Problem != "" }
func lnWatched(u subscriber.URIStatus) bool { return u.Watched }

// lnUpdateUntil changes uri to text and notifies until the update event
// arrives (a notification sent before the re-opened stream exists is lost
// by design: the reconnect read covers that gap, not the update).
func lnUpdateUntil(t *testing.T, c *collector, s lnUpdater, uri, text string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		s.Update(uri, text)
		select {
		case m := <-c.ch:
			if is(uri, event.ReasonUpdate, text)(m) {
				return
			}
			c.seen = append(c.seen, m)
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("no update event of %s with %q", uri, text)
}

// lnLifecycle checks start, update and reconnect events via listen against
// a modern server s serving url, with one URI the server does not honour
// when refused is set.
func lnLifecycle(t *testing.T, s lnUpdater, url, refused string) {
	natsURL := startNATS(t)
	s.Set("test://a", "a1")
	s.Set("test://b", "b1")
	uris := []string{"test://a", "test://b"}
	if refused != "" {
		s.Set(refused, "r1")
		uris = append(uris, refused)
	}
	cfg := withServer(baseConfig(natsURL), "docs", M{"url": url, "reconnect": lnFast, "subscriptions": subs(uris...)})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://a", event.ReasonStart, "a1"))
	c.next(is("test://b", event.ReasonStart, "b1"))
	r.waitReady(t)
	require.Equal(t, lnModern, rcStatus(t, r, "docs").Protocol)
	if refused != "" {
		u := lnWaitURI(t, r, "docs", refused, lnProblem)
		require.Contains(t, u.Problem, "did not acknowledge")
		r.Logs.waitLine(t, "cannot watch resource", "server=docs", "uri="+refused)
		require.True(t, uriStatus(t, r, "docs", "test://a").Watched)
	}

	s.Update("test://a", "a2")
	c.next(is("test://a", event.ReasonUpdate, "a2"))

	s.Set("test://b", "b3")
	s.Restart() // drops the listen stream
	c.next(is("test://a", event.ReasonReconnect, "a2"))
	c.next(is("test://b", event.ReasonReconnect, "b3"))
	r.Logs.waitLine(t, "session lost, reconnecting", "server=docs", "listen stream ended")
	lnUpdateUntil(t, c, s, "test://b", "b4")
	require.Equal(t, lnModern, rcStatus(t, r, "docs").Protocol)

	if refused != "" {
		for _, m := range c.drain() {
			require.NotEqual(t, refused, m.Ev.URI, "an unhonoured URI must not be read")
		}
	}
}

// TestListenMCPGoModern: an mcp-go server (modern over Streamable HTTP,
// notified through the hook workaround) that leaves one URI out of its
// acknowledgement.
func TestListenMCPGoModern(t *testing.T) {
	t.Parallel()
	ms := mcptest.Start(t, mcptest.Options{Refuse: []string{"test://refused"}})
	lnLifecycle(t, ms, ms.URL, "test://refused")
}

// TestListenGoSDKStateless: a go-sdk v1.8.0 stateless Streamable HTTP server
// with per-URI subscription handlers.
func TestListenGoSDKStateless(t *testing.T) {
	t.Parallel()
	s := mcptest.StartSDK(t, mcptest.SDKOptions{})
	lnLifecycle(t, s, s.URL, "")
}

// TestListenGoSDKStatefulIsLegacy: a stateful go-sdk server answers
// server/discover listing only legacy versions; mcp-go would still go modern.
// The watcher notices, uses the initialize handshake and resources/subscribe.
func TestListenGoSDKStatefulIsLegacy(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	s := mcptest.StartSDK(t, mcptest.SDKOptions{Stateful: true})
	s.Set("test://a", "a1")
	cfg := withServer(baseConfig(natsURL), "sdk", M{"url": s.URL, "reconnect": lnFast, "subscriptions": subs("test://a")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://a", event.ReasonStart, "a1"))
	r.waitReady(t)
	r.Logs.waitLine(t, "server=sdk", "using the legacy handshake")
	require.NotEqual(t, lnModern, rcStatus(t, r, "sdk").Protocol)
	// Legacy notifications travel on the GET stream, which mcp-go opens in
	// the background; go-sdk drops an update sent before it is up.
	lnUpdateUntil(t, c, s, "test://a", "a2")
}

// TestListenTypeScriptSDK: the official TypeScript SDK v2 server (protocol
// 2026-07-28 only) notifies on a timer; method auto receives the updates
// through subscriptions/listen.
func TestListenTypeScriptSDK(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	url, _ := peers.ModernServer(t, "UPDATE_MS=200")
	cfg := withServer(baseConfig(natsURL), "ts", M{"url": url, "reconnect": lnFast,
		"subscriptions": subs("test://modern/a", "test://modern/b")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://modern/a", event.ReasonStart, ""))
	c.next(is("test://modern/b", event.ReasonStart, ""))
	r.waitReady(t)
	require.Equal(t, lnModern, rcStatus(t, r, "ts").Protocol)
	a := c.next(is("test://modern/a", event.ReasonUpdate, ""))
	require.Contains(t, a.text(), "test://modern/a counter=")
	c.next(is("test://modern/b", event.ReasonUpdate, ""))
}

// TestListenBothErasInOneApp: one watcher process watches a legacy server
// (resources/subscribe over the GET stream), a legacy stdio server
// (server-everything), and two modern servers (mcp-go and the TypeScript SDK
// v2) at once; all deliver.
func TestListenBothErasInOneApp(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	legacy := mcptest.Start(t, mcptest.Options{Legacy: true})
	legacy.Set("test://old", "o1")
	modern := mcptest.Start(t, mcptest.Options{})
	modern.Set("test://new", "n1")
	tsURL, _ := peers.ModernServer(t, "UPDATE_MS=300")
	cmd, args := peers.Everything(t)
	const doc = "demo://resource/static/document/architecture.md"

	cfg := baseConfig(natsURL)
	withServer(cfg, "old", M{"url": legacy.URL, "reconnect": lnFast, "subscriptions": subs("test://old")})
	withServer(cfg, "new", M{"url": modern.URL, "reconnect": lnFast, "subscriptions": subs("test://new")})
	withServer(cfg, "ts", M{"url": tsURL, "reconnect": lnFast, "subscriptions": subs("test://modern/a")})
	withServer(cfg, "everything", M{"command": cmd, "args": args, "reconnect": lnFast, "subscriptions": subs(doc)})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://old", event.ReasonStart, "o1"))
	c.next(is("test://new", event.ReasonStart, "n1"))
	c.next(is("test://modern/a", event.ReasonStart, ""))
	c.next(is(doc, event.ReasonStart, ""))
	r.waitReady(t)
	require.Equal(t, lnModern, rcStatus(t, r, "new").Protocol)
	require.Equal(t, lnModern, rcStatus(t, r, "ts").Protocol)
	require.NotEqual(t, lnModern, rcStatus(t, r, "old").Protocol)
	require.NotEqual(t, lnModern, rcStatus(t, r, "everything").Protocol)

	legacy.Update("test://old", "o2")
	modern.Update("test://new", "n2")
	m := c.next(is("test://old", event.ReasonUpdate, "o2"))
	require.Equal(t, "old", m.Ev.ClientName)
	m = c.next(is("test://new", event.ReasonUpdate, "n2"))
	require.Equal(t, "new", m.Ev.ClientName)
	c.next(is("test://modern/a", event.ReasonUpdate, ""))
}

// TestListenForcedMethod: a method the server's era lacks is an error for
// that subscription, in the status, not a silent fallback; the server's other
// subscriptions proceed.
func TestListenForcedMethod(t *testing.T) {
	t.Parallel()
	t.Run("subscriptions/listen on a legacy server", func(t *testing.T) {
		natsURL := startNATS(t)
		legacy := mcptest.Start(t, mcptest.Options{Legacy: true})
		legacy.Set("test://a", "a1")
		legacy.Set("test://b", "b1")
		cfg := withServer(baseConfig(natsURL), "old", M{"url": legacy.URL, "reconnect": lnFast, "subscriptions": []M{
			{"uri": "test://a", "method": config.MethodListen},
			{"uri": "test://b"},
		}})
		r := runApp(t, loadConfig(t, cfg), app.Options{})
		c := consume(t, natsURL)
		c.next(is("test://b", event.ReasonStart, "b1"))
		u := lnWaitURI(t, r, "old", "test://a", lnProblem)
		require.Contains(t, u.Problem, "no subscriptions/listen")
		r.Logs.waitLine(t, "cannot watch resource", "server=old", "uri=test://a")
		legacy.Update("test://b", "b2")
		c.next(is("test://b", event.ReasonUpdate, "b2"))
		for _, m := range c.drain() {
			require.NotEqual(t, "test://a", m.Ev.URI)
		}
	})
	t.Run("resources/subscribe on a modern-only server", func(t *testing.T) {
		natsURL := startNATS(t)
		url, _ := peers.ModernServer(t, "UPDATE_MS=200")
		cfg := withServer(baseConfig(natsURL), "ts", M{"url": url, "reconnect": lnFast, "subscriptions": []M{
			{"uri": "test://modern/a", "method": config.MethodSubscribe},
		}})
		r := runApp(t, loadConfig(t, cfg), app.Options{})
		u := lnWaitURI(t, r, "ts", "test://modern/a", lnProblem)
		require.Contains(t, u.Problem, "no resources/subscribe")
		r.waitReady(t) // connected, in the server's era, with the problem reported
		require.Equal(t, lnModern, rcStatus(t, r, "ts").Protocol)
		r.Logs.waitLine(t, "cannot watch resource", "server=ts", "uri=test://modern/a")
		r.Logs.waitLine(t, "server=ts", "the legacy handshake failed")
	})
}

// TestListenStdioModern: the demo server over stdio negotiates 2026-07-28
// and delivers through subscriptions/listen; killed, it is restarted, the
// listen is sent again and the file changed meanwhile is read (reconnect).
func TestListenStdioModern(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	dir := demoFiles(t, map[string]string{"a.txt": "a1"})
	a := fileURI(dir, "a.txt")
	entry := demoServerEntry(t, dir, a)
	// The first restart is at least 300ms after the kill: the file changes
	// while no child runs.
	entry["reconnect"] = M{"initial_interval": "300ms", "max_interval": "500ms", "jitter": 0}
	r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "files", entry)), app.Options{})
	c := consume(t, natsURL)
	c.next(is(a, event.ReasonStart, "a1"))
	r.waitReady(t)
	require.Equal(t, lnModern, rcStatus(t, r, "files").Protocol)
	require.True(t, uriStatus(t, r, "files", a).Watched)

	writeFile(t, dir, "a.txt", "a2")
	c.next(is(a, event.ReasonUpdate, "a2"))

	pid := rcChildPid(t, demoServer(t))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a3"), 0o644))
	c.next(is(a, event.ReasonReconnect, "a3"))
	require.NotEqual(t, pid, rcChildPid(t, demoServer(t), pid))
	require.Equal(t, lnModern, rcStatus(t, r, "files").Protocol)

	// The new child's listen delivers.
	writeFile(t, dir, "a.txt", "a4")
	c.next(is(a, event.ReasonUpdate, "a4"))
	require.False(t, strings.Contains(r.Logs.String(), "using the legacy handshake"))
}
