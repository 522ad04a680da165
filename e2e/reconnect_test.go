package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/reconnect"
)

// The reconnect tests lose a session in every way issue 3 lists and check
// that the watcher comes back by itself: reconnect events carrying the
// content as of after recovery, and later updates still delivered. Each logs
// how long recovery took, measured from the loss (or from the server coming
// back) to the read of the first event after it.

// fast is a reconnect policy for tests: 50ms doubling to 500ms, no jitter.
var fast = M{"initial_interval": "50ms", "max_interval": "500ms", "multiplier": 2, "jitter": 0}

// recovered logs the time from t0 to the read behind m and returns it.
func recovered(t *testing.T, what string, t0 time.Time, m *msg) time.Duration {
	t.Helper()
	d := m.Ev.Time.Sub(t0)
	t.Logf("RECOVERY %s: %s (%s event of %s, seq %d)", what, d.Round(time.Millisecond), m.Ev.Reason, m.Ev.URI, m.Ev.Seq)
	return d
}

// TestReconnectStdioKill: SIGKILL the stdio child; the watcher restarts it,
// reads the file changed while it was down, logs the exit with the stderr
// tail, and later changes still arrive.
func TestReconnectStdioKill(t *testing.T) {
	natsURL := startNATS(t)
	dir := demoFiles(t, map[string]string{"a.txt": "a1"})
	a := fileURI(dir, "a.txt")
	entry := demoServerEntry(t, dir, a)
	entry["reconnect"] = M{"initial_interval": "100ms", "max_interval": "500ms", "jitter": 0}
	r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "files", entry)), app.Options{})
	c := consume(t, natsURL)
	c.next(is(a, event.ReasonStart, "a1"))
	r.waitReady(t)

	pid := rcChildPid(t, demoServer(t))
	t0 := time.Now()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// The child is dead and the first restart is at least 100ms away.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a2"), 0o644))

	m := c.next(is(a, event.ReasonReconnect, "a2"))
	recovered(t, "stdio SIGKILL -> reconnect event", t0, m)
	line := r.Logs.waitLine(t, "session lost, reconnecting", "server=files", "signal: killed", "stderr tail", "serving files")
	t.Logf("exit log line: %s", line)
	require.NotEqual(t, pid, rcChildPid(t, demoServer(t)), "the child was not restarted")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a3"), 0o644))
	c.next(is(a, event.ReasonUpdate, "a3"))
}

// TestReconnectStreamableHTTP loses a Streamable HTTP session in each way a
// server can lose it.
func TestReconnectStreamableHTTP(t *testing.T) {
	t.Run("expired session answers 404", func(t *testing.T) {
		natsURL := startNATS(t)
		ms := mcptest.Start(t, mcptest.Options{Stateful: true, Legacy: true})
		ms.Set("test://a", "a1")
		p := newRCProxy(t, ms.HTTP.URL)
		cfg := withServer(baseConfig(natsURL), "docs", M{"url": p.URL + "/mcp", "ping_interval": "0s",
			"reconnect": fast, "subscriptions": subs("test://a")})
		r := runApp(t, loadConfig(t, cfg), app.Options{})
		c := consume(t, natsURL)
		c.next(is("test://a", event.ReasonStart, "a1"))
		r.waitReady(t)

		p.expire(t)
		t0 := time.Now()
		ms.Update("test://a", "a2") // reaches us on the old GET stream; the read meets the 404
		require.Equal(t, 404, p.answer(t))
		m := c.next(is("test://a", event.ReasonReconnect, "a2"))
		recovered(t, "streamable-http 404 -> re-initialize -> reconnect event", t0, m)
		r.Logs.waitLine(t, "session lost, reconnecting", "server=docs", "HTTP 404")

		ms.Update("test://a", "a3")
		c.next(is("test://a", event.ReasonUpdate, "a3"))
	})

	t.Run("restart on the same port after downtime", func(t *testing.T) {
		natsURL := startNATS(t)
		s := newRCServer(t)
		s.set("test://a", "a1")
		s.start()
		cfg := withServer(baseConfig(natsURL), "docs", M{"url": s.URL(), "reconnect": fast,
			"subscriptions": []M{{"uri": "test://a", "method": config.MethodSubscribe}}})
		r := runApp(t, loadConfig(t, cfg), app.Options{})
		c := consume(t, natsURL)
		c.next(is("test://a", event.ReasonStart, "a1"))
		r.waitReady(t)

		down := time.Now()
		s.stop()
		s.set("test://a", "a2")
		// 50+100+200+400+500+500ms of refused connections: a few seconds down.
		st := rcWaitState(t, r, "docs", "six failed attempts", rcBackingOff(6))
		t.Logf("down for %s; last error: %s", time.Since(down).Round(time.Millisecond), st.LastError)
		require.Contains(t, st.LastError, "connection refused")
		up := time.Now()
		s.start()
		m := c.next(is("test://a", event.ReasonReconnect, "a2"))
		recovered(t, "streamable-http server back on the same port -> reconnect event", up, m)

		s.update("test://a", "a3")
		c.next(is("test://a", event.ReasonUpdate, "a3"))
	})

	t.Run("server forgets sessions silently", func(t *testing.T) {
		// stateless: any session id is accepted, so only the GET stream shows the restart
		restartRecovers(t, mcptest.Options{Legacy: true}, M{}, "streamable-http silent restart -> reconnect event")
	})
}

// TestReconnectEverything runs the losses against server-everything, which
// answers an unknown session with 400 instead of 404.
func TestReconnectEverything(t *testing.T) {
	const doc = "demo://resource/static/document/architecture.md"
	natsURL := startNATS(t)
	addr := rcFreeAddr(t)
	node := rcStartEverything(t, addr)
	p := newRCProxy(t, "http://"+addr)
	cfg := withServer(baseConfig(natsURL), "everything", M{"url": p.URL + "/mcp", "ping_interval": "300ms",
		"reconnect": fast, "subscriptions": subs(doc)})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	first := c.next(is(doc, event.ReasonStart, ""))
	r.waitReady(t)

	// The session expires: the keepalive ping meets server-everything's 400.
	p.expire(t)
	t0 := time.Now()
	require.Equal(t, 400, p.answer(t))
	m := c.next(is(doc, event.ReasonReconnect, first.text()))
	recovered(t, "server-everything 400 for an unknown session -> reconnect event", t0, m)
	r.Logs.waitLine(t, "session lost, reconnecting", "server=everything", "HTTP 400")

	// The server dies and comes back on the same port.
	down := time.Now()
	node.kill()
	rcWaitState(t, r, "everything", "three failed attempts", rcBackingOff(3))
	t.Logf("server-everything down for %s", time.Since(down).Round(time.Millisecond))
	up := time.Now()
	rcStartEverything(t, addr)
	t.Logf("server-everything took %s to listen again", time.Since(up).Round(time.Millisecond))
	m = c.next(func(m *msg) bool { return is(doc, event.ReasonReconnect, first.text())(m) && m.Ev.Time.After(up) })
	recovered(t, "server-everything restarted on the same port (from the restart command) -> reconnect event", up, m)
}

// TestReconnectSSE drops the SSE stream.
func TestReconnectSSE(t *testing.T) {
	// The SSE stream is a GET: the HTTP watcher or mcp-go's OnConnectionLost
	// reports it, whichever sees it first.
	restartRecovers(t, mcptest.Options{SSE: true}, M{"transport": config.TransportSSE}, "SSE stream dropped -> reconnect event", "stream")
}

// TestReconnectModernListen drops a 2026-07-28 subscriptions/listen stream.
func TestReconnectModernListen(t *testing.T) {
	r := restartRecovers(t, mcptest.Options{}, M{}, "listen stream dropped -> re-listen -> reconnect event", "listen stream ended")
	require.Equal(t, "2026-07-28", rcStatus(t, r, "docs").Protocol)
}

// restartRecovers runs an app watching test://a on a new mcptest server
// (opts; entry adds keys to the server's config), changes the content and
// restarts the server, which then knows no sessions: the reconnect event
// must carry the new content, the loss must be logged (with the detected
// parts), and a later update, which reaches only a re-established
// subscription, must arrive.
func restartRecovers(t *testing.T, opts mcptest.Options, entry M, label string, detected ...string) *running {
	t.Helper()
	natsURL := startNATS(t)
	ms := mcptest.Start(t, opts)
	ms.Set("test://a", "a1")
	entry["url"], entry["reconnect"], entry["subscriptions"] = ms.URL, fast, subs("test://a")
	r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "docs", entry)), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://a", event.ReasonStart, "a1"))
	r.waitReady(t)

	ms.Set("test://a", "a2")
	t0 := time.Now()
	ms.Restart()
	m := c.next(is("test://a", event.ReasonReconnect, "a2"))
	recovered(t, label, t0, m)
	t.Logf("detected as: %s", r.Logs.waitLine(t, append([]string{"session lost, reconnecting", "server=docs"}, detected...)...))

	ms.Update("test://a", "a3")
	c.next(is("test://a", event.ReasonUpdate, "a3"))
	return r
}

// TestReconnectDownAtStart: a server down at start (default policy) gets
// start events once it is up, while another server of the same watcher
// delivers its events meanwhile.
func TestReconnectDownAtStart(t *testing.T) {
	natsURL := startNATS(t)
	late := newRCServer(t)
	late.set("test://late", "l1")
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://ok", "o1")
	cfg := baseConfig(natsURL)
	withServer(cfg, "late", M{"url": late.URL(), "subscriptions": []M{{"uri": "test://late", "method": config.MethodSubscribe}},
		"reconnect": M{"initial_interval": "500ms", "max_interval": "30s", "multiplier": 2, "jitter": 0.2}})
	withServer(cfg, "ok", M{"url": ms.URL, "subscriptions": subs("test://ok")})
	t0 := time.Now()
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)

	ok := c.next(is("test://ok", event.ReasonStart, "o1"))
	t.Logf("the healthy server's start event came %s after start", ok.Ev.Time.Sub(t0).Round(time.Millisecond))
	require.False(t, r.Ready(), "ready while a server is down")
	u0 := time.Now()
	ms.Update("test://ok", "o2")
	u := c.next(is("test://ok", event.ReasonUpdate, "o2"))
	t.Logf("the healthy server's update took %s during the outage", u.Ev.Time.Sub(u0).Round(time.Millisecond))

	// Failed attempts after 0, ~0.5, ~1.5 and ~3.5s: the next is ~4s away.
	st := rcWaitState(t, r, "late", "four failed attempts", rcBackingOff(4))
	require.Contains(t, st.LastError, "connection refused")
	require.False(t, st.Permanent)
	up := time.Now()
	t.Logf("late server starts %s after the watcher; next attempt due in %s", up.Sub(t0).Round(time.Millisecond), time.Until(st.NextAttempt).Round(time.Millisecond))
	late.start()
	m := c.next(is("test://late", event.ReasonStart, "l1"))
	require.EqualValues(t, 1, m.Ev.Seq)
	recovered(t, "server down at start (default policy) -> start event, from the server coming up", up, m)
	r.waitReady(t)
	for _, m := range c.drain() {
		require.NotEqual(t, event.ReasonReconnect, m.Ev.Reason, "%s %s", m.Ev.URI, m.Ev.Reason)
	}
}

// TestReconnectKeepalive: a server that stops answering pings (its
// connection half-open) is counted as lost by ping_interval.
func TestReconnectKeepalive(t *testing.T) {
	natsURL := startNATS(t)
	s := newRCServer(t)
	s.set("test://a", "a1")
	s.start()
	cfg := withServer(baseConfig(natsURL), "docs", M{"url": s.URL(), "reconnect": fast,
		"ping_interval": "200ms", "timeout_seconds": 1,
		"subscriptions": []M{{"uri": "test://a", "method": config.MethodSubscribe}}})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://a", event.ReasonStart, "a1"))
	r.waitReady(t)

	s.set("test://a", "a2") // not notified: only a re-read finds it
	t0 := time.Now()
	s.hangPing.Store(true)
	r.Logs.waitLine(t, "session lost, reconnecting", "server=docs", "keepalive ping failed")
	t.Logf("half-open server detected after %s (ping_interval 200ms + timeout 1s)", time.Since(t0).Round(time.Millisecond))
	s.hangPing.Store(false)
	m := c.next(is("test://a", event.ReasonReconnect, "a2"))
	recovered(t, "half-open server -> keepalive loss -> reconnect event", t0, m)

	s.update("test://a", "a3")
	c.next(is("test://a", event.ReasonUpdate, "a3"))
}

// TestReconnectNoReadOnReconnect: read_on_reconnect: false re-subscribes
// without reading.
func TestReconnectNoReadOnReconnect(t *testing.T) {
	natsURL := startNATS(t)
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://quiet", "q1")
	ms.Set("test://loud", "l1")
	cfg := withServer(baseConfig(natsURL), "docs", M{"url": ms.URL, "reconnect": fast, "subscriptions": []M{
		{"uri": "test://quiet", "read_on_reconnect": false},
		{"uri": "test://loud"},
	}})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://quiet", event.ReasonStart, "q1"))
	c.next(is("test://loud", event.ReasonStart, "l1"))
	r.waitReady(t)
	reads := ms.Reads("test://quiet")

	ms.Set("test://quiet", "q2")
	t0 := time.Now()
	ms.Restart()
	m := c.next(is("test://loud", event.ReasonReconnect, "l1"))
	recovered(t, "read_on_reconnect true, alongside a false one", t0, m)
	r.waitReady(t)
	require.Equal(t, reads, ms.Reads("test://quiet"), "test://quiet was read after the reconnect")

	ms.Update("test://quiet", "q3") // still subscribed
	c.next(is("test://quiet", event.ReasonUpdate, "q3"))
	for _, m := range c.drain() {
		require.False(t, m.Ev.URI == "test://quiet" && m.Ev.Reason == event.ReasonReconnect, "reconnect event for test://quiet")
	}
}

// TestReconnectManyCycles loses a stdio and a Streamable HTTP session 20
// times; afterwards no child process is left (TestMain checks goroutines).
func TestReconnectManyCycles(t *testing.T) {
	const cycles = 20
	before := rcChildren(t)
	natsURL := startNATS(t)
	dir := demoFiles(t, map[string]string{"a.txt": "a0"})
	a := fileURI(dir, "a.txt")
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://b", "b0")
	quick := M{"initial_interval": "50ms", "max_interval": "500ms", "jitter": 0, "reset_after": "1ms"}
	stdio := demoServerEntry(t, dir, a)
	stdio["reconnect"] = quick
	cfg := baseConfig(natsURL)
	withServer(cfg, "files", stdio)
	withServer(cfg, "http", M{"url": ms.URL, "reconnect": quick, "subscriptions": subs("test://b")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is(a, event.ReasonStart, "a0"))
	c.next(is("test://b", event.ReasonStart, "b0"))
	r.waitReady(t)

	var stdioTimes, httpTimes []time.Duration
	pid := rcChildPid(t, demoServer(t))
	for i := 1; i <= cycles; i++ {
		text := "v" + string(rune('a'+i))
		t0 := time.Now()
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte(text), 0o644))
		ms.Set("test://b", text)
		ms.Restart()
		ma := c.next(is(a, event.ReasonReconnect, text))
		mb := c.next(is("test://b", event.ReasonReconnect, text))
		stdioTimes = append(stdioTimes, ma.Ev.Time.Sub(t0))
		httpTimes = append(httpTimes, mb.Ev.Time.Sub(t0))
		r.waitReady(t)
		pid = rcChildPid(t, demoServer(t), pid)
	}
	t.Logf("RECOVERY %d cycles, stdio SIGKILL: %s", cycles, rcSummary(stdioTimes))
	t.Logf("RECOVERY %d cycles, streamable-http restart: %s", cycles, rcSummary(httpTimes))
	require.Equal(t, cycles+1, rcStatus(t, r, "files").State.Sessions)

	require.NoError(t, r.stop(t))
	after := rcChildren(t)
	require.Equal(t, before, after, "child processes left behind")
}

// rcSummary renders min / median / max of ds.
func rcSummary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return "min " + s[0].Round(time.Millisecond).String() + ", median " + s[len(s)/2].Round(time.Millisecond).String() +
		", max " + s[len(s)-1].Round(time.Millisecond).String()
}

// TestReconnectConfigError: a command that does not exist is a
// configuration problem, retried only every max_interval.
func TestReconnectConfigError(t *testing.T) {
	natsURL := startNATS(t)
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://ok", "o1")
	cfg := baseConfig(natsURL)
	withServer(cfg, "broken", M{"command": filepath.Join(t.TempDir(), "no-such-server"), "subscriptions": subs("file:///x"),
		"reconnect": M{"initial_interval": "50ms", "max_interval": "3s", "jitter": 0}})
	withServer(cfg, "ok", M{"url": ms.URL, "subscriptions": subs("test://ok")})
	r := runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)
	c.next(is("test://ok", event.ReasonStart, "o1"))

	st := rcWaitState(t, r, "broken", "a permanent error", func(st reconnect.State) bool { return st.Permanent })
	require.Equal(t, reconnect.PhaseBackoff, st.Phase)
	require.Equal(t, 1, st.Attempt)
	require.Contains(t, st.LastError, "no-such-server")
	require.InDelta(t, float64(3*time.Second), float64(st.NextAttempt.Sub(st.Since)), float64(100*time.Millisecond),
		"a configuration problem must wait max_interval, not back off from initial_interval")
	line := r.Logs.waitLine(t, "level=ERROR", "configuration problem", "server=broken")
	t.Logf("logged: %s", line)
	require.Equal(t, 1, rcStatus(t, r, "broken").State.Attempt, "retried before max_interval")
}
