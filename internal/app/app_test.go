package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// The operations endpoints: /readyz turns 200 with every server's state once
// NATS and the session are up, /metrics serves the watcher's series, and the
// HTTP server is gone when Run returns.
func TestOperationsEndpoints(t *testing.T) {
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://a", "a1")
	dir := t.TempDir()
	addr := freeAddr(t)
	path := filepath.Join(dir, "watcher.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`
nats:
  embedded: {port: -1, store_dir: %q}
http: {listen: %q}
servers:
  docs:
    url: %s
    subscriptions:
      - uri: test://a
`, filepath.Join(dir, "nats"), addr, ms.URL)), 0o600))
	cfg, err := config.Load(path, nil)
	require.NoError(t, err)
	a, err := app.New(app.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	require.Eventually(t, func() bool { code, _ := get("/readyz"); return code == http.StatusOK }, 15*time.Second, 20*time.Millisecond)
	_, body := get("/readyz")
	var ready struct {
		Ready, NATS bool
		Servers     []struct{ Name, Phase, Protocol string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ready))
	require.True(t, ready.Ready)
	require.True(t, ready.NATS)
	require.Len(t, ready.Servers, 1)
	require.Equal(t, "docs", ready.Servers[0].Name)
	require.Equal(t, "connected", ready.Servers[0].Phase)

	require.Eventually(t, func() bool {
		_, m := get("/metrics")
		return strings.Contains(m, `watcher_subscriber_events_total{reason="start",server="docs"} 1`)
	}, 15*time.Second, 20*time.Millisecond)
	code, _ := get("/healthz")
	require.Equal(t, http.StatusOK, code)

	cancel()
	require.NoError(t, <-done)
	code, _ = get("/healthz")
	require.Zero(t, code, "the HTTP server stops with Run")
}
