package subscriber

import (
	"fmt"
	"testing"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
)

// Run with: go test -run '^$' -bench . -benchmem ./subscriber/
//
// The notification path (index lookup + mark) runs on the transport's
// reader goroutine, and take/done once per read: none of them should
// allocate.

func benchStates(n int) []*uriState {
	states := make([]*uriState, n)
	for i := range states {
		states[i] = &uriState{sub: config.Subscription{URI: fmt.Sprintf("file:///srv/docs/r%05d.md", i)}, watched: true}
	}
	return states
}

// BenchmarkQueueCycle is one URI's notification, the worker's take and
// its done, over 100 URIs.
func BenchmarkQueueCycle(b *testing.B) {
	q := newQueue()
	states := benchStates(100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.mark(states[i%len(states)], event.ReasonUpdate)
		st, r := q.take()
		q.done(st, "", true)
		_ = r
		i++
	}
}

// BenchmarkQueueStorm is a notification for a URI that is being read:
// the coalescing case of a storm.
func BenchmarkQueueStorm(b *testing.B) {
	q := newQueue()
	st := benchStates(1)[0]
	q.mark(st, event.ReasonUpdate)
	q.take()
	b.ReportAllocs()
	for b.Loop() {
		q.mark(st, event.ReasonUpdate)
	}
}

// BenchmarkNotifyLookup finds a notification's subscription among 10,000.
func BenchmarkNotifyLookup(b *testing.B) {
	states := benchStates(10000)
	ix := newIndex(states)
	b.Run("exact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = ix.lookup("file:///srv/docs/r04242.md")
		}
	})
	b.Run("canonical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = ix.lookup("FILE:///srv/docs/r04242.md/")
		}
	})
}
