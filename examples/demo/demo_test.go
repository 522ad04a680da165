package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
)

// TestDemoConfigLoads checks the demo config as the README runs it: from the
// repository root, with PWD set by the shell.
func TestDemoConfigLoads(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	t.Chdir(root)
	cfg, err := config.Load("examples/demo/watcher.yaml", []string{"PWD=" + root, "HOME=" + t.TempDir()})
	require.NoError(t, err)

	require.Empty(t, cfg.NATS.URL)
	require.True(t, cfg.Log.Events)
	s, ok := cfg.Servers["demo"]
	require.True(t, ok, "the demo server is missing")
	require.Equal(t, config.TransportStdio, s.Transport)
	require.Equal(t, "go", s.Command)

	entries, err := os.ReadDir("examples/demo/files")
	require.NoError(t, err)
	var want []string
	for _, e := range entries {
		want = append(want, "file://"+filepath.Join(root, "examples/demo/files", e.Name()))
	}
	var got []string
	for _, sub := range s.Subscriptions {
		require.Equal(t, config.MethodAuto, sub.Method)
		got = append(got, sub.URI)
	}
	require.ElementsMatch(t, want, got, "every demo file is subscribed, and nothing else")
}
