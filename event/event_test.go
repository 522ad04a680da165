package event_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

func TestDigestHashesTextAndDecodedBlobsInOrder(t *testing.T) {
	bin := []byte{0, 1, 2, 255}
	contents := []event.Content{
		{URI: "a", Text: "héllo"},
		{URI: "b", Blob: base64.StdEncoding.EncodeToString(bin)},
	}
	want := sha256.Sum256(append([]byte("héllo"), bin...))
	sum, n, err := event.Digest(contents)
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(want[:]), sum)
	require.Equal(t, len("héllo")+len(bin), n)
}

func TestDigestOfNothingIsSHA256OfEmpty(t *testing.T) {
	sum, n, err := event.Digest(nil)
	require.NoError(t, err)
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", sum)
	require.Zero(t, n)
}

func TestDigestReportsBadBase64(t *testing.T) {
	_, _, err := event.Digest([]event.Content{{Blob: "not base64!"}})
	require.Error(t, err)
}

// The JSON field names are a contract with consumers.
func TestJSONShape(t *testing.T) {
	ev := event.MCPResourceEvent{
		ID: "x-1", ClientName: "docs", URI: "file:///a", Reason: event.ReasonStart,
		Resource: &event.Resource{Contents: []event.Content{{URI: "file:///a", MIMEType: "text/plain", Text: "hi"}}},
		Time:     time.Date(2026, 11, 29, 20, 0, 0, 123456000, time.UTC), Seq: 1, ContentSHA256: "abc", ContentBytes: 2,
	}
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"x-1","client_name":"docs","uri":"file:///a","reason":"start",
		"resource":{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"hi"}]},
		"time":"2026-11-29T20:00:00.123456Z","seq":1,"content_sha256":"abc","content_bytes":2}`, string(b))
}
