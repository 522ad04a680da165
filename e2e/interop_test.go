package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/e2e/peers"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
)

// everythingDocs are static documents of server-everything and the files
// under its dist/docs it serves them from.
var everythingDocs = map[string]string{
	"demo://resource/static/document/architecture.md": "architecture.md",
	"demo://resource/static/document/features.md":     "features.md",
}

// TestInteropEverything watches server-everything (TypeScript SDK v1,
// written by nobody here) over stdio and Streamable HTTP: start events for
// its static documents carry exactly the text it serves.
func TestInteropEverything(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry func(t *testing.T) M
	}{
		{"stdio", func(t *testing.T) M {
			command, args := peers.Everything(t)
			return M{"command": command, "args": args}
		}},
		{"streamable-http", func(t *testing.T) M {
			return M{"url": peers.EverythingHTTP(t, peers.StreamableHTTP) + "/mcp"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs := filepath.Join(peers.NodeModules(t), "@modelcontextprotocol/server-everything/dist/docs")
			natsURL := startNATS(t)
			entry := tc.entry(t)
			var uris []string
			for uri := range everythingDocs {
				uris = append(uris, uri)
			}
			entry["subscriptions"] = subs(uris...)
			r := runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "everything", entry)), app.Options{})
			c := consume(t, natsURL)

			for uri, file := range everythingDocs {
				want, err := os.ReadFile(filepath.Join(docs, file))
				require.NoError(t, err)
				m := c.next(is(uri, event.ReasonStart, ""))
				require.Len(t, m.Ev.Resource.Contents, 1)
				require.Equal(t, string(want), m.text(), "the text of %s", uri)
				require.Equal(t, uri, m.Ev.Resource.Contents[0].URI)
				require.Equal(t, "everything", m.Ev.ClientName)
				require.Equal(t, sha(want), m.Ev.ContentSHA256)
				require.EqualValues(t, 1, m.Ev.Seq)
				require.Equal(t, m.Ev.ID, m.Header.Get(event.HeaderMsgID))
			}
			r.waitReady(t)
			for _, s := range r.Status() {
				require.Equal(t, "2025-11-25", s.Protocol)
				for _, u := range s.URIs {
					require.True(t, u.Watched, "%s: %s", u.URI, u.Problem)
				}
			}
		})
	}
}
