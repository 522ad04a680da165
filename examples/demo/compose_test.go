package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mcpwatch/watcher/config"
)

// TestComposeFile checks what can be checked of docker-compose.yml without a
// Docker engine: it parses, and the files it mounts exist.
func TestComposeFile(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Volumes []string `yaml:"volumes"`
			Build   *struct {
				Dockerfile string `yaml:"dockerfile"`
			} `yaml:"build"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	require.Contains(t, compose.Services, "nats")
	require.True(t, strings.HasPrefix(compose.Services["nats"].Image, "nats:2.11"))
	w, ok := compose.Services["watcher"]
	require.True(t, ok)
	require.NotNil(t, w.Build)
	require.FileExists(t, filepath.Join(root, w.Build.Dockerfile))
	for _, v := range w.Volumes {
		src := strings.Split(v, ":")[0]
		_, err := os.Stat(filepath.Join(root, src))
		require.NoErrorf(t, err, "volume %s mounts a path that does not exist", v)
	}
}

// TestComposeConfigLoads loads the watcher config compose mounts, with the
// override compose sets.
func TestComposeConfigLoads(t *testing.T) {
	cfg, err := config.Load("../compose/watcher.yaml", []string{"WATCHER_NATS__URL=nats://nats:4222"})
	require.NoError(t, err)
	require.Equal(t, "nats://nats:4222", cfg.NATS.URL)
	require.Equal(t, config.TransportStdio, cfg.Servers["demo"].Transport)
	require.Len(t, cfg.Servers["demo"].Subscriptions, 3)
	for _, s := range cfg.Servers["demo"].Subscriptions {
		name := strings.TrimPrefix(s.URI, "file:///demo/files/")
		require.FileExists(t, filepath.Join("files", name), "the compose config subscribes a file the demo does not have")
	}
}
