package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a configuration, tied to its key path
// (for example servers.docs.subscriptions[0].uri).
type Problem struct {
	Path    string
	Message string
}

// String returns "key.path: message".
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems is every problem found in a configuration. It is the error Load
// and Validate return when the configuration is invalid; use errors.As to get
// it back and Lines to print one line per problem.
type Problems []Problem

// Error returns one "key.path: message" line per problem.
func (ps Problems) Error() string { return strings.Join(ps.Lines(), "\n") }

// Lines returns one "key.path: message" string per problem, in order.
func (ps Problems) Lines() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// add records a problem at path.
func (ps *Problems) add(path, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	*ps = append(*ps, Problem{Path: path, Message: msg})
}

// sorted returns ps ordered by key path, keeping the order of problems at
// the same path, so the output does not depend on map iteration.
func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
	return ps
}

// join returns prefix.key, or whichever of the two is not empty.
func join(prefix, key string) string {
	if prefix == "" || key == "" {
		return prefix + key
	}
	return prefix + "." + key
}
