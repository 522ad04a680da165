package publish

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

func TestParseSubject(t *testing.T) {
	uri := "file:///srv/docs/README.md"
	hash := URIHash(uri)
	require.Len(t, hash, 16)
	ok := map[string]string{
		"mcp.events.{server}.{reason}":     "mcp.events.docs.update",
		"mcp.{server}.{uri_hash}":          "mcp.docs." + hash,
		"x.{server}-{reason}.{uri_hash}.y": "x.docs-update." + hash + ".y",
		"plain.subject":                    "plain.subject",
	}
	for tmpl, want := range ok {
		s, err := ParseSubject(tmpl)
		require.NoError(t, err, tmpl)
		require.Equal(t, want, string(s.Append(nil, "docs", event.ReasonUpdate, uri)), tmpl)
		require.Equal(t, tmpl, s.String())
	}
	bad := map[string]string{
		"":                    "empty",
		"mcp.{nope}":          "unknown variable {nope}",
		"mcp.{server":         "unclosed",
		"mcp..{server}":       "empty token",
		"mcp.{server}.":       "empty token",
		"mcp.*.{server}":      "wildcard",
		"mcp.>":               "wildcard",
		"mcp events.{server}": "white space",
	}
	for tmpl, msg := range bad {
		_, err := ParseSubject(tmpl)
		require.ErrorContains(t, err, msg, tmpl)
	}
}

func TestSubjectCaptured(t *testing.T) {
	cases := []struct {
		pattern, filter string
		want            bool
	}{
		{"mcp.events.*.start", "mcp.events.>", true},
		{"mcp.events.*.start", "mcp.events.*.start", true},
		{"mcp.events.*.start", "mcp.events.*.*", true},
		{"mcp.events.*.start", "mcp.events.docs.start", false},
		{"mcp.events.*.start", "mcp.events.*", false},
		{"mcp.events", "mcp.events.>", false},
		{"mcp.events.a", "mcp.>", true},
		{"other.x", "mcp.>", false},
		{"mcp.x-*.start", "mcp.*.start", true},
		{"mcp.x-*.start", "mcp.x-a.start", false},
	}
	for _, c := range cases {
		require.Equal(t, c.want, subjectCaptured(c.pattern, c.filter), "%s in %s", c.pattern, c.filter)
	}
}

func TestSetHeadersReusesSlices(t *testing.T) {
	h := nats.Header{}
	ev := newEvent("docs", uriN(1), 1, "x")
	setHeaders(h, ev)
	require.Equal(t, ev.ID, h.Get(event.HeaderMsgID))
	ev2 := newEvent("docs", uriN(1), 2, "y")
	setHeaders(h, ev2)
	require.Equal(t, ev2.ID, h.Get(event.HeaderMsgID))
	require.Equal(t, "update", h.Get(event.HeaderReason))
	require.Len(t, h, 5)
	require.Equal(t, 0.0, testing.AllocsPerRun(100, func() { setHeaders(h, ev) }))
}

func TestSubjectAppendAllocatesNothing(t *testing.T) {
	s, err := ParseSubject("mcp.events.{server}.{reason}.{uri_hash}")
	require.NoError(t, err)
	buf := make([]byte, 0, 128)
	require.Equal(t, 0.0, testing.AllocsPerRun(100, func() {
		buf = s.Append(buf[:0], "docs", event.ReasonUpdate, "file:///srv/docs/README.md")
	}))
}
