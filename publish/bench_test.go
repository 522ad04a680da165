package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/event"
)

// Run with: go test -run '^$' -bench . -benchmem ./publish/

func BenchmarkSubject(b *testing.B) {
	s, err := ParseSubject("mcp.events.{server}.{reason}.{uri_hash}")
	if err != nil {
		b.Fatal(err)
	}
	uri := "file:///srv/docs/some/deeper/path/README.md"
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 128)
		for b.Loop() {
			buf = s.Append(buf[:0], "docs", event.ReasonUpdate, uri)
		}
	})
	b.Run("cached", func(b *testing.B) {
		p, err := New(benchOptions("nats://127.0.0.1:1"))
		if err != nil {
			b.Fatal(err)
		}
		sl := p.slotFor(key{"docs", uri})
		b.ReportAllocs()
		for b.Loop() {
			_ = p.subjectLocked(sl, event.ReasonUpdate)
		}
	})
}

func BenchmarkHeaders(b *testing.B) {
	h := nats.Header{}
	ev := benchEvent(1, "file:///srv/docs/README.md", strings.Repeat("x", 1024))
	setHeaders(h, ev)
	b.ReportAllocs()
	for b.Loop() {
		setHeaders(h, ev)
	}
}

func benchOptions(url string) Options {
	o := testOptions(url, nil)
	o.Logger = slog.New(slog.DiscardHandler)
	o.Registerer = nil
	return o
}

func benchEvent(i int, uri, text string) *event.MCPResourceEvent {
	return &event.MCPResourceEvent{
		ID: "bench-" + strconv.Itoa(i), ClientName: "docs", URI: uri, Reason: event.ReasonUpdate,
		Resource: &event.Resource{Contents: []event.Content{{URI: uri, MIMEType: "text/plain", Text: text}}},
		Time:     time.Now().UTC(), Seq: uint64(i), ContentSHA256: strings.Repeat("ab", 32), ContentBytes: len(text),
	}
}

// BenchmarkPublish compares the publisher, end to end (Publish until the
// JetStream ack, 1 KiB content over 10,000 URIs), with a bare
// js.PublishAsync loop of the same, already encoded, messages on the same
// embedded server. ns/op is per stored event; superseded/op should be 0.
func BenchmarkPublish(b *testing.B) {
	const uris = 10000
	text := strings.Repeat("x", 1024)
	uriNames := make([]string, uris)
	for i := range uriNames {
		uriNames[i] = fmt.Sprintf("file:///srv/docs/r%05d.md", i)
	}

	b.Run("publisher", func(b *testing.B) {
		ns := startServer(b, b.TempDir(), -1, nil)
		p := startPublisher(b, benchOptions(ns.ClientURL()))
		p.waitReady(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			// Keep well under the URI count pending so nothing is superseded
			// and every event is stored, as in the raw loop.
			if i%256 == 0 {
				for p.Stats().Pending >= uris/2 {
					<-time.After(20 * time.Microsecond)
				}
			}
			if err := p.Publish(ctx, benchEvent(i, uriNames[i%uris], text)); err != nil {
				b.Fatal(err)
			}
		}
		for s := p.Stats(); s.Delivered+s.Superseded < uint64(b.N); s = p.Stats() {
			<-time.After(50 * time.Microsecond)
		}
		b.StopTimer()
		s := p.Stats()
		b.ReportMetric(float64(s.Superseded)/float64(b.N), "superseded/op")
	})

	b.Run("raw", func(b *testing.B) {
		ns := startServer(b, b.TempDir(), -1, nil)
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(DefaultMaxInFlight))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MCP_EVENTS", Subjects: []string{"mcp.events.>"},
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
			b.Fatal(err)
		}
		data, err := json.Marshal(benchEvent(1, uriNames[0], text))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := js.PublishAsync("mcp.events.docs.update", data, jetstream.WithMsgID("raw-"+strconv.Itoa(i))); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Minute):
			b.Fatal("acks did not arrive")
		}
		b.StopTimer()
	})
}
