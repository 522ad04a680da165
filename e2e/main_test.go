package e2e

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain gives the tests a directory for the binaries they build and checks
// for leaked goroutines once they all ran.
func TestMain(m *testing.M) {
	var err error
	binDir, err = os.MkdirTemp("", "watcher-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: make a directory for test binaries:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func leakOptions() []goleak.Option {
	return []goleak.Option{
		// mcp-go's SSE server never ends a subscriptions/listen handler
		// (its context is cut off from the request): a server-side leak.
		goleak.IgnoreTopFunction("github.com/mark3labs/mcp-go/server.(*MCPServer).handleSubscriptionsListen"),
		// nats.go jetstream can leave this one blocked on a nil channel when
		// a connection closes right after its first async publish.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
	}
}
