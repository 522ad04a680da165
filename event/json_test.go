package event_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

var awkward = []string{
	"", "plain", `quote " and \ backslash`, "line\nbreak\r\ttab\b\f", "\x00\x01\x1f\x7f",
	"<html> & </html>", "héllo wörld ✓ 😀", "bad utf8 \xff\xfe end", "\xe2\x82", "sep \u2028 and \u2029",
	"ends with a half rune \xc3",
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	base := event.MCPResourceEvent{
		ID: "abc-1", ClientName: "docs", URI: "file:///a", Reason: event.ReasonUpdate,
		Time: time.Date(2026, 11, 29, 20, 0, 0, 123456789, time.UTC), Seq: 42, ContentSHA256: "deadbeef",
	}
	var cases []event.MCPResourceEvent
	cases = append(cases, base) // no resource, no optional fields
	for _, s := range awkward {
		ev := base
		ev.ID, ev.ClientName, ev.URI, ev.ContentOmitted, ev.ContentObject = s, s, s, s, s
		ev.ContentBytes = len(s)
		ev.Resource = &event.Resource{Contents: []event.Content{
			{URI: s, MIMEType: s, Text: s},
			{URI: s, Blob: s},
			{},
		}}
		cases = append(cases, ev)
	}
	empty := base
	empty.Resource = &event.Resource{}
	cases = append(cases, empty)
	local := base
	local.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	local.Seq, local.ContentBytes = 1<<63, -1
	cases = append(cases, local)

	for i, ev := range cases {
		want, err := json.Marshal(&ev)
		require.NoError(t, err)
		got := ev.AppendJSON(nil)
		require.Equal(t, string(want), string(got), "case %d", i)
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, text, uri string) {
		ev := event.MCPResourceEvent{URI: uri, Resource: &event.Resource{Contents: []event.Content{{URI: uri, Text: text}}}}
		want, err := json.Marshal(&ev)
		require.NoError(t, err)
		require.Equal(t, string(want), string(ev.AppendJSON(nil)))
	})
}

func BenchmarkEncode(b *testing.B) {
	text := make([]byte, 1024)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	ev := event.MCPResourceEvent{ID: "0123456789abcdef-1", ClientName: "docs", URI: "file:///srv/docs/README.md", Reason: event.ReasonUpdate,
		Time: time.Now().UTC(), Seq: 7, ContentSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", ContentBytes: 1024,
		Resource: &event.Resource{Contents: []event.Content{{URI: "file:///srv/docs/README.md", MIMEType: "text/markdown", Text: string(text)}}}}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(&ev)
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = ev.AppendJSON(buf[:0])
		}
	})
}
