package config

import (
	"reflect"
	"sort"
	"strings"
)

// EnvPrefix starts every environment override: WATCHER_NATS__URL sets nats.url.
const EnvPrefix = "WATCHER_"

// applyEnv writes WATCHER_* overrides from environ into the raw top-level map
// m. The rest of the name, lower-cased and split at "__", is the key path.
// A list key takes a comma-separated value; scalars are parsed by the decoder.
// Keys inside servers cannot be overridden (use ${VAR} there). A variable
// whose first level names no top-level key is ignored, so other tools'
// WATCHER_* variables do no harm; a wrong key under a known section is a
// problem.
func applyEnv(m map[string]any, environ []string, ps *Problems) {
	var names []string
	vals := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, EnvPrefix) && len(k) > len(EnvPrefix) {
			if _, seen := vals[k]; !seen {
				names = append(names, k)
			}
			vals[k] = v
		}
	}
	sort.Strings(names)
	root := reflect.TypeFor[Config]()
	for _, name := range names {
		tokens := strings.Split(strings.ToLower(strings.TrimPrefix(name, EnvPrefix)), "__")
		if tokens[0] == "servers" || tokens[0] == "mcpservers" {
			ps.add(name, "environment overrides do not apply inside servers; use ${VAR} in the server entry instead")
			continue
		}
		if _, ok := typeAt(root, tokens[:1]); !ok {
			continue // not ours (WATCHER_TEST_LOG, say): only known sections are checked
		}
		t, ok := typeAt(root, tokens)
		if !ok || hasEmpty(tokens) {
			ps.add(name, "no such config key %s (check the spelling; variables are WATCHER_ plus the key path upper-cased, with __ between levels; see docs/config.md)", strings.Join(tokens, "."))
			continue
		}
		if t.Kind() == reflect.Struct {
			ps.add(name, "%s is a section; set one of its keys, such as %s__%s", strings.Join(tokens, "."), name, strings.ToUpper(keysOf(t)[0]))
			continue
		}
		var v any = vals[name]
		if t.Kind() == reflect.Slice {
			v = splitList(vals[name])
		}
		setPath(m, tokens, v)
	}
}

func hasEmpty(tokens []string) bool {
	for _, t := range tokens {
		if t == "" {
			return true
		}
	}
	return false
}

// splitList splits a comma-separated value, trimming spaces and dropping
// empty items.
func splitList(s string) []any {
	out := []any{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// setPath sets m[tokens...] = v, creating (or replacing non-map values with)
// maps on the way.
func setPath(m map[string]any, tokens []string, v any) {
	for _, tok := range tokens[:len(tokens)-1] {
		next, ok := m[tok].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[tok] = next
		}
		m = next
	}
	m[tokens[len(tokens)-1]] = v
}
