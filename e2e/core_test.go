package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
)

// checkEvent checks everything an event of server's uri must carry, as a
// consumer decodes it: the JSON keys, the headers and the content digest.
func checkEvent(t *testing.T, m *msg, server, uri string, reason event.Reason, seq uint64, text string, since time.Time) {
	t.Helper()
	ev := m.Ev
	require.NotEmpty(t, ev.ID)
	require.Equal(t, server, ev.ClientName)
	require.Equal(t, uri, ev.URI)
	require.Equal(t, reason, ev.Reason)
	require.Equal(t, seq, ev.Seq, "seq of %s %s", uri, reason)
	require.NotNil(t, ev.Resource)
	require.Len(t, ev.Resource.Contents, 1)
	require.Equal(t, text, ev.Resource.Contents[0].Text)
	require.Equal(t, uri, ev.Resource.Contents[0].URI)
	require.Empty(t, ev.ContentOmitted)
	sum := sha256.Sum256([]byte(text))
	require.Equal(t, hex.EncodeToString(sum[:]), ev.ContentSHA256)
	require.False(t, ev.Time.Before(since.Add(-time.Second)), "time %s is before the test began (%s)", ev.Time, since)
	require.False(t, ev.Time.After(time.Now().Add(time.Second)), "time %s is in the future", ev.Time)
	require.Equal(t, time.UTC, ev.Time.Location())

	// The wire format, key by key, as the issue fixes it.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(m.Data, &raw))
	for _, k := range []string{"id", "client_name", "uri", "reason", "resource", "time", "seq", "content_sha256"} {
		require.Contains(t, raw, k, "event JSON: %s", m.Data)
	}
	contents := raw["resource"].(map[string]any)["contents"].([]any)
	require.Equal(t, text, contents[0].(map[string]any)["text"])
	_, err := time.Parse(time.RFC3339Nano, raw["time"].(string))
	require.NoError(t, err)

	require.Equal(t, ev.ID, m.Header.Get(event.HeaderMsgID))
	require.Equal(t, server, m.Header.Get(event.HeaderServer))
	require.Equal(t, uri, m.Header.Get(event.HeaderURI))
	require.Equal(t, string(reason), m.Header.Get(event.HeaderReason))
	require.Equal(t, "application/json", m.Header.Get(event.HeaderContentType))
	require.Equal(t, "mcp.events."+server+"."+string(reason), m.Subject)
}

// TestStartAndUpdate runs the watcher against a real MCP server on each
// transport: start events for every subscribed URI, then an update event
// after a change, all read back from the JetStream stream.
func TestStartAndUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup starts the server with a and b as "a1" and "b1" and returns
		// its entry, the two URIs and a function that changes a to text.
		setup func(t *testing.T) (entry M, a, b string, change func(text string))
	}{
		{"stdio", func(t *testing.T) (M, string, string, func(string)) {
			dir := demoFiles(t, map[string]string{"a.txt": "a1", "b.md": "b1"})
			a, b := fileURI(dir, "a.txt"), fileURI(dir, "b.md")
			change := func(text string) { writeFile(t, dir, "a.txt", text) }
			return demoServerEntry(t, dir, a, b), a, b, change
		}},
		{"sse", func(t *testing.T) (M, string, string, func(string)) {
			return mcptestEntry(t, mcptest.Options{SSE: true}, config.TransportSSE)
		}},
		{"streamable-http legacy", func(t *testing.T) (M, string, string, func(string)) {
			return mcptestEntry(t, mcptest.Options{Legacy: true}, config.TransportStreamableHTTP)
		}},
		{"streamable-http modern", func(t *testing.T) (M, string, string, func(string)) {
			return mcptestEntry(t, mcptest.Options{}, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			since := time.Now()
			natsURL := startNATS(t)
			entry, a, b, change := tc.setup(t)
			r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "docs", entry)), app.Options{})
			c := consume(t, natsURL)

			sa := c.next(is(a, event.ReasonStart, ""))
			checkEvent(t, sa, "docs", a, event.ReasonStart, 1, "a1", since)
			sb := c.next(is(b, event.ReasonStart, ""))
			checkEvent(t, sb, "docs", b, event.ReasonStart, 1, "b1", since)
			require.NotEqual(t, sa.Ev.ID, sb.Ev.ID)
			r.waitReady(t)

			change("a2")
			u := c.next(is(a, event.ReasonUpdate, "a2"))
			checkEvent(t, u, "docs", a, event.ReasonUpdate, 2, "a2", since)
			require.NotEqual(t, sa.Ev.ID, u.Ev.ID)
		})
	}
}

// mcptestEntry starts an in-process mcp-go server with test://a = "a1" and
// test://b = "b1" and returns its entry (transport tr, or inferred from the
// URL when empty).
func mcptestEntry(t *testing.T, opts mcptest.Options, tr string) (M, string, string, func(string)) {
	ms := mcptest.Start(t, opts)
	ms.Set("test://a", "a1")
	ms.Set("test://b", "b1")
	entry := M{"url": ms.URL, "subscriptions": subs("test://a", "test://b")}
	if tr != "" {
		entry["transport"] = tr
	}
	return entry, "test://a", "test://b", func(text string) { ms.Update("test://a", text) }
}

// TestSubjects renders {uri_hash} in the default template and honours a
// subscription's own subject.
func TestSubjects(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://a", "a1")
	ms.Set("test://b", "b1")
	cfg := baseConfig(natsURL)
	cfg["subject"] = "mcp.events.{server}.{uri_hash}.{reason}"
	withServer(cfg, "docs", M{"url": ms.URL, "subscriptions": []M{
		{"uri": "test://a"},
		{"uri": "test://b", "subject": "mcp.events.custom.{server}.{reason}"},
	}})
	runApp(t, loadConfig(t, cfg), app.Options{})
	c := consume(t, natsURL)

	sum := sha256.Sum256([]byte("test://a"))
	a := c.next(is("test://a", event.ReasonStart, "a1"))
	require.Equal(t, "mcp.events.docs."+hex.EncodeToString(sum[:])[:16]+".start", a.Subject)
	b := c.next(is("test://b", event.ReasonStart, "b1"))
	require.Equal(t, "mcp.events.custom.docs.start", b.Subject)

	ms.Update("test://b", "b2")
	b = c.next(is("test://b", event.ReasonUpdate, "b2"))
	require.Equal(t, "mcp.events.custom.docs.update", b.Subject)
}

// TestCoreNATS publishes with jetstream.enabled: false.
func TestCoreNATS(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	c := subscribeCore(t, natsURL, "mcp.events.>")
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://a", "a1")
	cfg := withServer(baseConfig(natsURL), "docs", M{"url": ms.URL, "subscriptions": subs("test://a")})
	cfg["nats"].(M)["jetstream"] = M{"enabled": false}
	runApp(t, loadConfig(t, cfg), app.Options{})

	m := c.next(is("test://a", event.ReasonStart, "a1"))
	require.Equal(t, "mcp.events.docs.start", m.Subject)
	require.Equal(t, m.Ev.ID, m.Header.Get(event.HeaderMsgID))
	ms.Update("test://a", "a2")
	c.next(is("test://a", event.ReasonUpdate, "a2"))
}
