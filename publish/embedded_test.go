package publish

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
)

func TestStartEmbeddedWithPublisher(t *testing.T) {
	ns, err := StartEmbedded(config.Embedded{Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir()}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { stopServer(ns) })
	require.True(t, ns.JetStreamEnabled())

	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	p.waitReady(t)
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(1), 1, "embedded")))
	p.waitDrained(t, 10*time.Second)
	require.Len(t, readStream(t, ns.ClientURL(), "MCP_EVENTS"), 1)
}

func TestStartEmbeddedErrors(t *testing.T) {
	_, err := StartEmbedded(config.Embedded{Host: "127.0.0.1", Port: -1}, nil)
	require.ErrorContains(t, err, "store_dir")

	ns, err := StartEmbedded(config.Embedded{Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir()}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { stopServer(ns) })
	port := ns.Addr().(*net.TCPAddr).Port
	_, err = StartEmbedded(config.Embedded{Host: "127.0.0.1", Port: port, StoreDir: t.TempDir()}, nil)
	require.ErrorContains(t, err, "nats.embedded.port")
}
