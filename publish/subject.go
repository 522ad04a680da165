package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unsafe"

	"github.com/mcpwatch/watcher/event"
)

// Template variables understood by ParseSubject.
const (
	VarServer  = "{server}"
	VarReason  = "{reason}"
	VarURIHash = "{uri_hash}"
)

type partKind uint8

const (
	partLiteral partKind = iota
	partServer
	partReason
	partURIHash
)

type part struct {
	kind partKind
	lit  string
}

// Subject is a compiled subject template such as
// "mcp.events.{server}.{reason}". The zero value renders nothing; build one
// with ParseSubject. A Subject is immutable and safe for concurrent use.
type Subject struct {
	tmpl  string
	parts []part
}

// ParseSubject compiles tmpl. Variables are {server}, {reason} and
// {uri_hash} (the first 16 hex digits of the sha256 of the URI). The template
// must yield a valid publish subject: no spaces, no empty tokens and no
// wildcards (* or >).
func ParseSubject(tmpl string) (Subject, error) {
	if tmpl == "" {
		return Subject{}, fmt.Errorf("subject template is empty; set it, e.g. %q", "mcp.events.{server}.{reason}")
	}
	s := Subject{tmpl: tmpl}
	rest := tmpl
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			s.parts = append(s.parts, part{kind: partLiteral, lit: rest})
			break
		}
		if i > 0 {
			s.parts = append(s.parts, part{kind: partLiteral, lit: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return Subject{}, fmt.Errorf("subject template %q: unclosed '{'; variables are %s, %s and %s", tmpl, VarServer, VarReason, VarURIHash)
		}
		switch v := rest[i : i+j+1]; v {
		case VarServer:
			s.parts = append(s.parts, part{kind: partServer})
		case VarReason:
			s.parts = append(s.parts, part{kind: partReason})
		case VarURIHash:
			s.parts = append(s.parts, part{kind: partURIHash})
		default:
			return Subject{}, fmt.Errorf("subject template %q: unknown variable %s; use %s, %s or %s", tmpl, v, VarServer, VarReason, VarURIHash)
		}
		rest = rest[i+j+1:]
	}
	// Validate the shape with representative values.
	sample := string(s.Append(nil, "server", event.ReasonStart, "uri"))
	if err := checkPublishSubject(sample); err != nil {
		return Subject{}, fmt.Errorf("subject template %q: %w", tmpl, err)
	}
	return s, nil
}

func checkPublishSubject(subj string) error {
	if strings.ContainsAny(subj, " \t\r\n") {
		return fmt.Errorf("a subject cannot contain white space")
	}
	for _, tok := range strings.Split(subj, ".") {
		switch tok {
		case "":
			return fmt.Errorf("a subject cannot have an empty token (leading, trailing or doubled '.')")
		case "*", ">":
			return fmt.Errorf("a publish subject cannot contain the wildcard %q", tok)
		}
	}
	return nil
}

// String returns the template as written.
func (s Subject) String() string { return s.tmpl }

// Append renders the subject for one event onto dst and returns the extended
// slice. It allocates nothing when dst has room for the result.
func (s Subject) Append(dst []byte, server string, reason event.Reason, uri string) []byte {
	for _, p := range s.parts {
		switch p.kind {
		case partLiteral:
			dst = append(dst, p.lit...)
		case partServer:
			dst = append(dst, server...)
		case partReason:
			dst = append(dst, reason...)
		case partURIHash:
			dst = appendURIHash(dst, uri)
		}
	}
	return dst
}

// appendURIHash appends the first 16 hex digits of sha256(uri).
func appendURIHash(dst []byte, uri string) []byte {
	// Hash the string's bytes in place: sha256.Sum256 only reads them, and
	// []byte(uri) would allocate a copy on every event.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(uri), len(uri)))
	return hex.AppendEncode(dst, sum[:8])
}

// URIHash returns the first 16 hex digits of sha256(uri), as {uri_hash}
// renders it.
func URIHash(uri string) string { return string(appendURIHash(nil, uri)) }

// pattern renders the template for reason with "*" in place of {server} and
// {uri_hash}, for checking which stream subjects capture it.
func (s Subject) pattern(reason event.Reason) string {
	var b []byte
	for _, p := range s.parts {
		switch p.kind {
		case partLiteral:
			b = append(b, p.lit...)
		case partServer, partURIHash:
			b = append(b, '*')
		case partReason:
			b = append(b, reason...)
		}
	}
	return string(b)
}

// subjectCaptured reports whether every subject matching pattern (which may
// hold "*" tokens, possibly mixed with literal text inside a token, treated as
// "any token") is matched by the stream subject filter.
func subjectCaptured(pattern, filter string) bool {
	pt := strings.Split(pattern, ".")
	ft := strings.Split(filter, ".")
	for i, f := range ft {
		if f == ">" {
			return len(pt) > i
		}
		if i >= len(pt) {
			return false
		}
		if f == "*" {
			continue
		}
		if strings.Contains(pt[i], "*") || pt[i] != f {
			return false
		}
	}
	return len(pt) == len(ft)
}

// capturedByAny reports whether one of filters captures pattern.
func capturedByAny(pattern string, filters []string) bool {
	for _, f := range filters {
		if subjectCaptured(pattern, f) {
			return true
		}
	}
	return false
}
