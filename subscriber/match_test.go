package subscriber

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
)

func TestIndexLookup(t *testing.T) {
	var states []*uriState
	for _, u := range []string{"file:///srv/docs", "file:///srv/docs/README.md", "test://counter", "https://Example.com/a%20b/"} {
		states = append(states, &uriState{sub: config.Subscription{URI: u}})
	}
	ix := newIndex(states)
	for _, tc := range []struct{ notified, want string }{
		{"file:///srv/docs/README.md", "file:///srv/docs/README.md"}, // exact beats prefix
		{"file:///srv/docs/guide/intro.md", "file:///srv/docs"},      // sub-resource
		{"file:///srv/docs/", "file:///srv/docs"},                    // trailing slash
		{"file:/srv/docs", "file:///srv/docs"},                       // file: variant
		{"file:///srv/docsX", ""},                                    // prefix only at a '/'
		{"file:///srv", ""},                                          // an ancestor is not a match
		{"test://counter", "test://counter"},
		{"test://counter/sub", "test://counter"},
		{"test://other", ""},                                      // never above the authority
		{"HTTPS://example.com/a b", "https://Example.com/a%20b/"}, // case and percent-encoding
	} {
		got := ix.lookup(tc.notified)
		if tc.want == "" {
			require.Nil(t, got, tc.notified)
			continue
		}
		require.NotNil(t, got, tc.notified)
		require.Equal(t, tc.want, got.sub.URI, tc.notified)
	}
}
