package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeFile writes content to a file called name in a fresh temp dir and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// loadMap writes m as a JSON config file and loads it.
func loadMap(t *testing.T, m map[string]any, environ ...string) (*Config, error) {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return Load(writeFile(t, "watcher.json", string(b)), environ)
}

// problemsOf returns the Problems inside err, failing the test if there are
// none.
func problemsOf(t *testing.T, err error) Problems {
	t.Helper()
	require.Error(t, err)
	var ps Problems
	require.True(t, errors.As(err, &ps), "want Problems, got %T: %v", err, err)
	return ps
}

// validBase is a valid config with an HTTP server (docs) and a stdio server
// (local); each test case changes one thing in a fresh copy.
func validBase() map[string]any {
	return map[string]any{
		"nats": map[string]any{"url": "nats://127.0.0.1:4222"},
		"servers": map[string]any{
			"docs": map[string]any{
				"url":     "http://127.0.0.1:3001/mcp",
				"headers": map[string]any{"Authorization": "Bearer x"},
				"subscriptions": []any{
					map[string]any{"uri": "file:///srv/docs/README.md"},
				},
			},
			"local": map[string]any{
				"command": "node",
				"args":    []any{"server.js"},
				"subscriptions": []any{
					map[string]any{"uri": "file:///a"},
					map[string]any{"uri": "file:///b"},
				},
			},
		},
	}
}

// section returns the map at the given keys under m, creating it if needed.
func section(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return m
}

// sub returns subscription i of server name.
func sub(m map[string]any, name string, i int) map[string]any {
	return section(m, "servers", name)["subscriptions"].([]any)[i].(map[string]any)
}
