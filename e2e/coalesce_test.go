package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
)

// counter returns the value of the counter name whose labels include
// labels (name=value pairs), summed over matching series.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue series
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestCoalescingBurst: while a read is blocked on the server, 200
// notifications for the URI arrive; once reads go on, at most one more read
// follows and the last event carries the final content.
func TestCoalescingBurst(t *testing.T) {
	t.Parallel()
	const burst = 200
	const uri = "test://hot"
	natsURL := startNATS(t)
	ms := mcptest.Start(t, mcptest.Options{Legacy: true})
	// Block is set before the resource is added: adding it takes the
	// server's lock, which every later read takes before it looks at Block.
	ms.Block = make(chan struct{})
	ms.Set(uri, "v0")
	reg := prometheus.NewRegistry()
	r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "docs", M{"url": ms.URL, "subscriptions": subs(uri)})), app.Options{Registry: reg})
	c := consume(t, natsURL)

	// give lets one blocked read through.
	give := func() {
		t.Helper()
		select {
		case ms.Block <- struct{}{}:
		case <-time.After(waitFor):
			t.Fatal("no read is waiting on the server")
		}
	}
	give() // the start read
	c.next(is(uri, event.ReasonStart, "v0"))
	r.waitReady(t)
	require.Eventually(t, func() bool { return uriStatus(t, r, "docs", uri).Watched }, waitFor, 10*time.Millisecond)

	// The first notification starts a read that blocks on the server; the
	// rest arrive while it waits. They go in batches smaller than mcp-go's
	// per-session notification buffer (100), which drops what overflows.
	notes := func() float64 { return counter(t, reg, "watcher_subscriber_notifications_total", "server", "docs") }
	for i := 1; i <= burst; i++ {
		ms.Update(uri, fmt.Sprintf("v%d", i))
		if i%50 == 0 || i == burst {
			require.Eventuallyf(t, func() bool { return notes() >= float64(i) },
				waitFor, time.Millisecond, "the watcher did not receive %d notifications", i)
		}
	}
	require.Equal(t, 1, ms.Reads(uri), "only the start read has passed the block")

	// One read is in flight (blocked) and one is pending: exactly two more
	// reads, both of the final content.
	give()
	give()
	final := fmt.Sprintf("v%d", burst)
	u1 := c.next(is(uri, event.ReasonUpdate, final))
	u2 := c.next(is(uri, event.ReasonUpdate, final))
	require.EqualValues(t, 2, u1.Ev.Seq)
	require.EqualValues(t, 3, u2.Ev.Seq)
	require.Equal(t, 3, ms.Reads(uri), "reads for a burst of %d notifications, the start read included", burst)
	for _, m := range c.drain() {
		require.False(t, m.Ev.URI == uri && m.Ev.Reason == event.ReasonUpdate, "an extra update event: seq %d %q", m.Ev.Seq, m.text())
	}
	require.GreaterOrEqual(t, counter(t, reg, "watcher_subscriber_notifications_coalesced_total", "server", "docs"), float64(burst-2))
}
