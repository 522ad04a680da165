package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

func TestJetStreamDelivery(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.LogEvents = true
	p := startPublisher(t, opts)
	p.waitReady(t)

	ctx := context.Background()
	evs := []*event.MCPResourceEvent{
		newEvent("docs", uriN(1), 1, "one"),
		newEvent("docs", uriN(2), 1, "two"),
		newEvent("docs", uriN(1), 2, "one, edited"),
	}
	for i, ev := range evs {
		require.NoError(t, p.Publish(ctx, ev))
		if i == 1 { // else evs[2] may supersede evs[0] before it is sent
			p.waitDrained(t, 10*time.Second)
		}
	}
	p.waitDrained(t, 10*time.Second)

	msgs := readStream(t, ns.ClientURL(), "MCP_EVENTS")
	require.Len(t, msgs, 3)
	byID := map[string]stored{}
	for _, m := range msgs {
		byID[m.ev.ID] = m
	}
	for _, ev := range evs {
		m, ok := byID[ev.ID]
		require.True(t, ok, "event %s stored", ev.ID)
		require.Equal(t, ev.ID, m.header.Get(event.HeaderMsgID))
		require.Equal(t, "docs", m.header.Get(event.HeaderServer))
		require.Equal(t, ev.URI, m.header.Get(event.HeaderURI))
		require.Equal(t, string(ev.Reason), m.header.Get(event.HeaderReason))
		require.Equal(t, "application/json", m.header.Get(event.HeaderContentType))
		require.Equal(t, ev.Resource.Contents[0].Text, m.ev.Resource.Contents[0].Text)
		require.Equal(t, ev.ContentSHA256, m.ev.ContentSHA256)
	}

	// The stream was created as configured.
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	st, err := js.Stream(ctx, "MCP_EVENTS")
	require.NoError(t, err)
	require.Equal(t, []string{"mcp.events.>"}, st.CachedInfo().Config.Subjects)
	require.Equal(t, 2*time.Minute, st.CachedInfo().Config.Duplicates)

	// The subject is rendered from the template.
	require.Equal(t, "mcp.events.docs.start", subjectOf(t, js, byID[evs[0].ID].seq))

	s := p.Stats()
	require.EqualValues(t, 3, s.Delivered)
	require.Zero(t, s.InFlight)
	require.True(t, hasLine(logs, "event published", "server=docs", "uri="+uriN(1), "reason=update", "seq=2",
		"subject=mcp.events.docs.update"), logs.String())
}

func subjectOf(t *testing.T, js jetstream.JetStream, seq uint64) string {
	t.Helper()
	st, err := js.Stream(context.Background(), "MCP_EVENTS")
	require.NoError(t, err)
	m, err := st.GetMsg(context.Background(), seq)
	require.NoError(t, err)
	return m.Subject
}

func TestRepublishedIDIsADuplicate(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	ev := newEvent("docs", uriN(1), 1, "x")
	require.NoError(t, p.Publish(context.Background(), ev))
	p.waitDrained(t, 10*time.Second)
	// The same event again (as a retry would send it): JetStream absorbs it.
	require.NoError(t, p.Publish(context.Background(), ev))
	p.waitDrained(t, 10*time.Second)
	s := p.Stats()
	require.EqualValues(t, 2, s.Delivered)
	require.EqualValues(t, 1, s.Duplicates)
	require.Len(t, readStream(t, ns.ClientURL(), "MCP_EVENTS"), 1)
}

func TestCoreMode(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	msgs := make(chan *nats.Msg, 100)
	sub, err := nc.ChanSubscribe("mcp.events.>", msgs)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, nc.Flush())

	opts := testOptions(ns.ClientURL(), nil)
	opts.NATS.JetStream.Enabled = false
	p := startPublisher(t, opts)
	p.waitReady(t)
	const n = 50
	for i := 1; i <= n; i++ {
		require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(i%3), uint64(i), fmt.Sprint(i))))
	}
	p.waitDrained(t, 10*time.Second)
	s := p.Stats()
	require.EqualValues(t, n, s.Delivered+s.Superseded, "every event delivered or superseded")
	require.NoError(t, nc.Flush())
	last := map[string]uint64{}
	for range s.Delivered {
		select {
		case m := <-msgs:
			require.Equal(t, "application/json", m.Header.Get(event.HeaderContentType))
			require.NotEmpty(t, m.Header.Get(event.HeaderMsgID))
			uri := m.Header.Get(event.HeaderURI)
			var ev event.MCPResourceEvent
			require.NoError(t, json.Unmarshal(m.Data, &ev))
			require.Greater(t, ev.Seq, last[uri], "order per URI")
			last[uri] = ev.Seq
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of %d messages", len(last), s.Delivered)
		}
	}
}

func TestSubjectNotCaptured(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.ShutdownTimeout = 50 * time.Millisecond
	opts.SubjectFor = func(server, uri string) string {
		if uri == uriN(2) {
			return "elsewhere.{server}.{uri_hash}"
		}
		return ""
	}
	p := startPublisher(t, opts)
	p.waitReady(t)

	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(1), 1, "ok")))
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(2), 1, "lost")))
	want := "subject=elsewhere.docs." + URIHash(uriN(2))
	require.Eventually(t, func() bool { return hasLine(logs, "no stream subject captures", want, "stream=MCP_EVENTS") },
		10*time.Second, 5*time.Millisecond, logs.String())
	// It keeps running: the captured event is delivered, the other retried.
	require.Eventually(t, func() bool { s := p.Stats(); return s.Delivered == 1 && s.Retries > 0 && s.Pending == 1 },
		10*time.Second, 5*time.Millisecond)
	require.True(t, p.Ready())
	require.Equal(t, 1.0, metricValue(t, p, "subject_not_captured_total"))
}

func TestDefaultSubjectNotCapturedIsReportedAtStart(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.DefaultSubject = "events.{server}.{reason}"
	p := startPublisher(t, opts)
	p.waitReady(t)
	require.True(t, hasLine(logs, "no stream subject captures", "subject=events.*.start"), logs.String())
	require.Equal(t, 3.0, metricValue(t, p, "subject_not_captured_total"))
}

func TestMissingStreamWithoutCreate(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.NATS.JetStream.CreateStream = false
	p := startPublisher(t, opts)
	require.Eventually(t, func() bool {
		return hasLine(logs, "stream MCP_EVENTS does not exist; create it or set nats.jetstream.create_stream: true")
	}, 10*time.Second, 5*time.Millisecond, logs.String())
	require.False(t, p.Ready())
}

func TestShutdownFlushesPending(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	const n = 200
	for i := range n {
		require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(i), 1, "x")))
	}
	require.NoError(t, p.stop(t))
	s := p.Stats()
	require.Zero(t, s.Pending)
	require.EqualValues(t, n, s.Delivered)
	require.Len(t, readStream(t, ns.ClientURL(), "MCP_EVENTS"), n)

	err := p.Publish(context.Background(), newEvent("docs", uriN(1), 2, "late"))
	require.ErrorIs(t, err, ErrClosed)
}

func TestShutdownReportsUndelivered(t *testing.T) {
	// A server that is gone: the publisher buffers and never connects.
	ns := startServer(t, t.TempDir(), -1, nil)
	url := ns.ClientURL()
	stopServer(ns)

	logs := &logBuf{}
	opts := testOptions(url, logs)
	opts.ShutdownTimeout = 100 * time.Millisecond
	p := startPublisher(t, opts)
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(1), 1, "a")))
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(2), 1, "b")))
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(2), 2, "c")))
	start := time.Now()
	require.NoError(t, p.stop(t))
	require.Less(t, time.Since(start), 5*time.Second)
	require.True(t, hasLine(logs, "events not delivered before the shutdown timeout", "uri="+uriN(1), "events=1"), logs.String())
	require.True(t, hasLine(logs, "events not delivered before the shutdown timeout", "uri="+uriN(2), "events=1"), logs.String())
	require.True(t, hasLine(logs, "publisher stopped with undelivered events", "events=2", "uris=2"), logs.String())
	require.Equal(t, 2, p.Stats().Pending)
	require.EqualValues(t, 1, p.Stats().Superseded)
}

func TestNewValidates(t *testing.T) {
	valid := func() Options { return testOptions("nats://127.0.0.1:4222", nil) }
	cases := map[string]func(*Options){
		"no url":             func(o *Options) { o.URL = "" },
		"bad subject":        func(o *Options) { o.DefaultSubject = "mcp.{nope}" },
		"wildcard subject":   func(o *Options) { o.DefaultSubject = "mcp.*.{server}" },
		"no stream":          func(o *Options) { o.NATS.JetStream.Stream = "" },
		"token and user":     func(o *Options) { o.NATS.Token, o.NATS.User = "t", "u" },
		"cert without key":   func(o *Options) { o.NATS.TLS.CertFile = "c.pem" },
		"object store, core": func(o *Options) { o.Publish.ObjectStore = "b"; o.NATS.JetStream.Enabled = false },
	}
	_, err := New(valid())
	require.NoError(t, err)
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			o := valid()
			mutate(&o)
			_, err := New(o)
			require.Error(t, err)
		})
	}
}

func TestRunFailsOnUnusableCredentials(t *testing.T) {
	opts := testOptions("nats://127.0.0.1:4222", nil)
	opts.NATS.NKeyFile = "/nonexistent/seed.nk"
	p, err := New(opts)
	require.NoError(t, err)
	err = p.Run(context.Background())
	require.Error(t, err)
	require.Contains(t, err.Error(), "nats.nkey_file")
	require.True(t, errors.Is(p.Publish(context.Background(), newEvent("a", "b", 1, "c")), ErrClosed))
}
