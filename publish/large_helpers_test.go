package publish

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

// restartWithMaxPayload replaces ns by a server on a fresh store with a
// smaller max_payload.
func restartWithMaxPayload(t *testing.T, ns *server.Server, maxPayload int32) *server.Server {
	t.Helper()
	port := ns.Addr().(*net.TCPAddr).Port
	stopServer(ns)
	return startServer(t, t.TempDir(), port, func(o *server.Options) { o.MaxPayload = maxPayload })
}

func getObject(t *testing.T, url, bucket, name string) event.Resource {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	obs, err := js.ObjectStore(ctx, bucket)
	require.NoError(t, err)
	data, err := obs.GetBytes(ctx, name)
	require.NoError(t, err)
	var res event.Resource
	require.NoError(t, json.Unmarshal(data, &res))
	return res
}
