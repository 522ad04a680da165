package subscriber_test

import (
	"testing"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/mcptest"
	"github.com/mcpwatch/watcher/subscriber"
)

// A server whose reads hang holds shared read slots, yet another server
// sharing the same (tiny) process-wide limit still gets every start event:
// each server's only read in flight needs no shared slot.
func TestSharedReadLimitDoesNotLetOneServerStarveAnother(t *testing.T) {
	reads := subscriber.NewReadLimiter(1)

	slow := mcptest.Start(t, mcptest.Options{Legacy: true})
	block := make(chan struct{})
	slow.Block = block
	slowURIs := []string{"test://s1", "test://s2", "test://s3", "test://s4"}
	for _, u := range slowURIs {
		slow.Set(u, "slow")
	}
	fast := mcptest.Start(t, mcptest.Options{Legacy: true})
	fastURIs := []string{"test://f1", "test://f2", "test://f3"}
	for _, u := range fastURIs {
		fast.Set(u, "fast")
	}

	hs := runWith(t, config.Server{Name: "slow", Transport: config.TransportStreamableHTTP, URL: slow.URL, Subscriptions: subs(slowURIs...)}, nil, reads)
	hf := runWith(t, config.Server{Name: "fast", Transport: config.TransportStreamableHTTP, URL: fast.URL, Subscriptions: subs(fastURIs...)}, nil, reads)
	for _, u := range fastURIs {
		hf.next(t, is(u, event.ReasonStart, "fast"))
	}
	close(block)
	for _, u := range slowURIs {
		hs.next(t, is(u, event.ReasonStart, "slow"))
	}
}
