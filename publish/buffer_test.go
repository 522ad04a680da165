package publish

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

// downServer returns the URL and port of a NATS server that was started
// and stopped, so the publisher buffers until the test starts it again.
func downServer(t *testing.T, dir string) (string, int) {
	ns := startServer(t, dir, -1, nil)
	port := ns.Addr().(*net.TCPAddr).Port
	url := ns.ClientURL()
	stopServer(ns)
	return url, port
}

func TestBufferBounds(t *testing.T) {
	dir := t.TempDir()
	url, port := downServer(t, dir)
	logs := &logBuf{}
	opts := testOptions(url, logs)
	opts.Publish.MaxPendingEvents = 5
	opts.Publish.MaxPendingBytes = 4000
	p := startPublisher(t, opts)
	ctx := context.Background()

	for i := range 5 {
		require.NoError(t, p.Publish(ctx, newEvent("docs", uriN(i), 1, "small")))
	}
	// A sixth URI: dropped, counted, logged.
	err := p.Publish(ctx, newEvent("docs", uriN(5), 1, "small"))
	require.ErrorIs(t, err, ErrBufferFull)
	require.EqualValues(t, 1, p.Stats().Dropped)
	require.Equal(t, 1.0, metricValue(t, p, "dropped_total", "reason", "max_pending_events"))
	require.True(t, hasLine(logs, "the publish buffer is full", "uri="+uriN(5), "dropped=1"), logs.String())

	// A newer event of a pending URI replaces it: accepted at the bound.
	require.NoError(t, p.Publish(ctx, newEvent("docs", uriN(0), 2, "small, v2")))
	s := p.Stats()
	require.EqualValues(t, 1, s.Superseded)
	require.Equal(t, 5, s.Pending)

	// Over the byte bound: kept, without content.
	big := newEvent("docs", uriN(1), 2, strings.Repeat("x", 5000))
	require.NoError(t, p.Publish(ctx, big))
	s = p.Stats()
	require.EqualValues(t, 2, s.Superseded)
	require.Equal(t, 5, s.Pending)
	require.LessOrEqual(t, s.PendingBytes, int64(4000))
	require.Equal(t, 1.0, metricValue(t, p, "content_omitted_total", "reason", OmittedBufferFull))
	require.Equal(t, 5.0, metricValue(t, p, "pending_events"))

	startServer(t, dir, port, nil)
	p.waitDrained(t, 20*time.Second)
	msgs := readStream(t, url, "MCP_EVENTS")
	require.Len(t, msgs, 5)
	for _, m := range msgs {
		switch m.ev.URI {
		case uriN(0):
			require.EqualValues(t, 2, m.ev.Seq)
			require.Equal(t, "small, v2", m.ev.Resource.Contents[0].Text)
		case uriN(1):
			require.EqualValues(t, 2, m.ev.Seq)
			require.Nil(t, m.ev.Resource)
			require.Equal(t, OmittedBufferFull, m.ev.ContentOmitted)
			require.Equal(t, 5000, m.ev.ContentBytes)
			require.Equal(t, big.ContentSHA256, m.ev.ContentSHA256)
			require.Equal(t, big.ID, m.ev.ID)
		}
	}
}

func TestLongOutageStaysWithinBounds(t *testing.T) {
	dir := t.TempDir()
	url, port := downServer(t, dir)
	opts := testOptions(url, nil)
	opts.Publish.MaxPendingBytes = 16 << 10
	p := startPublisher(t, opts)

	const uris, updates = 20, 300
	pr := newProducer(p, uris)
	pr.pad = strings.Repeat("y", 1024)
	maxBytes := int64(0)
	for range updates {
		pr.round(t)
		maxBytes = max(maxBytes, p.Stats().PendingBytes)
	}
	s := p.Stats()
	require.Equal(t, uris, s.Pending)
	require.EqualValues(t, uris*(updates-1), s.Superseded)
	// Stripped events (a few hundred bytes each) may exceed the byte bound.
	require.LessOrEqual(t, maxBytes, opts.Publish.MaxPendingBytes+uris*512)
	require.Positive(t, metricValue(t, p, "content_omitted_total", "reason", OmittedBufferFull))

	startServer(t, dir, port, nil)
	p.waitDrained(t, 20*time.Second)
	final, _ := pr.final()
	checkStream(t, readStream(t, url, "MCP_EVENTS"), final)
}

func TestLargeContentOmitted(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	ns = restartWithMaxPayload(t, ns, 8<<10)
	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	ev := newEvent("docs", uriN(1), 1, strings.Repeat("z", 20<<10))
	require.NoError(t, p.Publish(context.Background(), ev))
	p.waitDrained(t, 10*time.Second)

	msgs := readStream(t, ns.ClientURL(), "MCP_EVENTS")
	require.Len(t, msgs, 1)
	got := msgs[0].ev
	require.Equal(t, ev.ID, got.ID)
	require.Nil(t, got.Resource)
	require.Equal(t, event.OmittedTooLarge, got.ContentOmitted)
	require.Equal(t, 20<<10, got.ContentBytes)
	require.Equal(t, ev.ContentSHA256, got.ContentSHA256)
	require.Empty(t, got.ContentObject)
	require.Zero(t, p.Stats().Retries, "sent once, not retried in a loop")
	require.Equal(t, 1.0, metricValue(t, p, "content_omitted_total", "reason", event.OmittedTooLarge))
}

func TestLargeContentToObjectStore(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	ns = restartWithMaxPayload(t, ns, 8<<10)
	opts := testOptions(ns.ClientURL(), nil)
	opts.Publish.ObjectStore = "mcp-content"
	p := startPublisher(t, opts)
	ev := newEvent("docs", uriN(1), 1, strings.Repeat("z", 20<<10))
	small := newEvent("docs", uriN(2), 1, "small")
	require.NoError(t, p.Publish(context.Background(), ev))
	require.NoError(t, p.Publish(context.Background(), small))
	p.waitDrained(t, 10*time.Second)

	msgs := readStream(t, ns.ClientURL(), "MCP_EVENTS")
	require.Len(t, msgs, 2)
	var got event.MCPResourceEvent
	for _, m := range msgs {
		if m.ev.URI == uriN(1) {
			got = m.ev
		} else {
			require.Equal(t, "small", m.ev.Resource.Contents[0].Text)
		}
	}
	require.Equal(t, ev.ID, got.ID)
	require.Nil(t, got.Resource)
	require.Equal(t, event.OmittedTooLarge, got.ContentOmitted)
	require.Equal(t, ObjectName(ev), got.ContentObject)
	require.Equal(t, ev.ContentSHA256, got.ContentSHA256)
	require.Equal(t, 1.0, metricValue(t, p, "content_omitted_total", "reason", "object_store"))

	res := getObject(t, ns.ClientURL(), "mcp-content", got.ContentObject)
	require.Equal(t, ev.Resource.Contents, res.Contents)
}
