package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestContentKinds runs the demo server over stdio with a file over
// max_content_bytes, a binary file and a file that is then deleted.
func TestContentKinds(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	big := strings.Repeat("x", 500)
	bin := string([]byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe, 1, 2, 3})
	dir := demoFiles(t, map[string]string{"big.txt": big, "img.bin": bin, "gone.txt": "soon gone", "small.txt": "tiny"})
	bigURI, binURI, goneURI, smallURI := fileURI(dir, "big.txt"), fileURI(dir, "img.bin"), fileURI(dir, "gone.txt"), fileURI(dir, "small.txt")
	entry := demoServerEntry(t, dir, bigURI, binURI, goneURI, smallURI)
	entry["max_content_bytes"] = 100
	runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "files", entry)), app.Options{})
	c := consume(t, natsURL)

	m := c.next(is(bigURI, event.ReasonStart, ""))
	require.Equal(t, event.OmittedTooLarge, m.Ev.ContentOmitted)
	require.Equal(t, 500, m.Ev.ContentBytes)
	require.Nil(t, m.Ev.Resource)
	require.Equal(t, sha([]byte(big)), m.Ev.ContentSHA256, "the digest still describes the omitted content")
	require.NotContains(t, string(m.Data), `"contents"`)

	m = c.next(is(binURI, event.ReasonStart, ""))
	require.Len(t, m.Ev.Resource.Contents, 1)
	ct := m.Ev.Resource.Contents[0]
	require.Empty(t, ct.Text)
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte(bin)), ct.Blob)
	require.Equal(t, sha([]byte(bin)), m.Ev.ContentSHA256, "sha256 over the decoded bytes")

	m = c.next(is(smallURI, event.ReasonStart, "tiny"))
	require.Equal(t, "text/plain", m.Ev.Resource.Contents[0].MIMEType)

	c.next(is(goneURI, event.ReasonStart, "soon gone"))
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	m = c.next(func(m *msg) bool { return m.Ev.URI == goneURI && m.Ev.Reason == event.ReasonUpdate })
	require.Equal(t, event.OmittedNotFound, m.Ev.ContentOmitted)
	require.Nil(t, m.Ev.Resource)
	require.EqualValues(t, 2, m.Ev.Seq)

	// Back again: an ordinary update.
	writeFile(t, dir, "gone.txt", "back")
	c.next(is(goneURI, event.ReasonUpdate, "back"))
}

// TestDeletedResource: mcptest's Delete makes reads fail with
// RESOURCE_NOT_FOUND (INVALID_PARAMS on 2026-07-28), which the watcher
// publishes as a tombstone. (It failed while mcptest kept the resource and
// returned an error from its handler: mcp-go sends that as an internal error.)
func TestDeletedResource(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mcptest.Options
	}{{"legacy", mcptest.Options{Legacy: true}}, {"modern", mcptest.Options{}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			natsURL := startNATS(t)
			ms := mcptest.Start(t, tc.opts)
			ms.Set("test://a", "a1")
			runApp(t, loadConfig(t, withServer(baseConfig(natsURL), "docs", M{"url": ms.URL, "subscriptions": subs("test://a")})), app.Options{})
			c := consume(t, natsURL)

			c.next(is("test://a", event.ReasonStart, "a1"))
			ms.Delete("test://a")
			ms.Notify("test://a")
			m := c.next(func(m *msg) bool { return m.Ev.URI == "test://a" && m.Ev.Reason == event.ReasonUpdate })
			require.Equal(t, event.OmittedNotFound, m.Ev.ContentOmitted)
			require.Nil(t, m.Ev.Resource)
			require.Zero(t, m.Ev.ContentBytes)
			require.EqualValues(t, 2, m.Ev.Seq)

			ms.Update("test://a", "a3") // back again
			c.next(is("test://a", event.ReasonUpdate, "a3"))
		})
	}
}
