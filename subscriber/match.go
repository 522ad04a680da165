package subscriber

import (
	"net/url"
	"strings"
)

// index finds the subscription a notification's URI belongs to: the exact
// URI, else the same URI in canonical form, else the nearest subscribed
// ancestor at a '/' boundary (the spec allows notifications for
// sub-resources of a subscribed URI). It is built once and only read after,
// so it is safe for concurrent use without locks.
type index struct {
	exact map[string]*uriState
	canon map[string]*uriState
}

func newIndex(states []*uriState) *index {
	ix := &index{exact: make(map[string]*uriState, len(states)), canon: make(map[string]*uriState, len(states))}
	for _, st := range states {
		ix.exact[st.sub.URI] = st
		ix.canon[canonicalURI(st.sub.URI)] = st
	}
	return ix
}

func (ix *index) lookup(uri string) *uriState {
	if st, ok := ix.exact[uri]; ok {
		return st
	}
	c := canonicalURI(uri)
	if st, ok := ix.canon[c]; ok {
		return st
	}
	// Walk up the path: "a/b/c" tries "a/b/" and "a/b", then "a/" and "a".
	// Never above the authority ("scheme://host").
	floor := strings.Index(c, "://")
	if floor >= 0 {
		floor += 3
	}
	for i := len(c) - 1; i > floor; i-- {
		if c[i] != '/' {
			continue
		}
		if st, ok := ix.canon[c[:i]]; ok {
			return st
		}
	}
	return nil
}

// canonicalURI is the form URIs are compared in: scheme and host lower
// case, path percent-decoded, no trailing slash. The server is always sent
// the configured string, never this.
func canonicalURI(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return strings.TrimSuffix(s, "/")
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(strings.ToLower(u.Scheme))
	if u.Opaque != "" {
		b.WriteByte(':')
		b.WriteString(u.Opaque)
	} else {
		b.WriteString("://")
		b.WriteString(strings.ToLower(u.Host))
		b.WriteString(strings.TrimSuffix(u.Path, "/"))
	}
	if u.RawQuery != "" {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	return b.String()
}
