package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// env is the environment Load was given, as a lookup table.
type env map[string]string

// newEnv parses KEY=VALUE entries; a later entry wins over an earlier one.
func newEnv(environ []string) env {
	e := make(env, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			e[k] = v
		}
	}
	return e
}

// interpolate expands ${VAR}, ${env:VAR}, ${VAR:-default} (default used when
// VAR is unset or empty) and $$ (a literal $) in s. A $ followed by anything
// else is kept as is. Errors never contain the value of a variable.
func interpolate(s string, e env) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ (close it with }, or write $$ for a literal $)")
			}
			v, err := expand(s[i+2:i+2+end], e)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// expand resolves the inside of one ${...}.
func expand(ref string, e env) (string, error) {
	ref = strings.TrimPrefix(ref, "env:")
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validVarName(name) {
		return "", fmt.Errorf("${%s} is not a valid variable reference (use ${NAME}, ${env:NAME} or ${NAME:-default})", ref)
	}
	v, ok := e[name]
	switch {
	case hasDef && v == "":
		return def, nil
	case !ok:
		return "", fmt.Errorf("variable %s is not set (set it or use ${%s:-default})", name, name)
	}
	return v, nil
}

// validVarName reports whether name looks like an environment variable name.
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && !(i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// interpolateTree returns v with every string inside it (map values and list
// items, at any depth) interpolated. Problems are recorded under their key
// paths; a string that fails is left as it was.
func interpolateTree(v any, path string, e env, ps *Problems) any {
	switch t := v.(type) {
	case string:
		out, err := interpolate(t, e)
		if err != nil {
			ps.add(path, "%s", err.Error())
			return t
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t[k] = interpolateTree(t[k], join(path, k), e, ps)
		}
		return t
	case []any:
		for i := range t {
			t[i] = interpolateTree(t[i], path+"["+strconv.Itoa(i)+"]", e, ps)
		}
		return t
	}
	return v
}

// expandHome replaces a leading ~ or ~/ in the string at m[key] with the home
// directory from HOME. ~user is left alone.
func expandHome(m map[string]any, key, path string, e env, ps *Problems) {
	s, ok := m[key].(string)
	if !ok || !(s == "~" || strings.HasPrefix(s, "~/")) {
		return
	}
	home := e["HOME"]
	if home == "" {
		ps.add(join(path, key), "cannot expand ~ because HOME is not set (set HOME or write the full path)")
		return
	}
	m[key] = strings.TrimSuffix(home, "/") + s[1:]
}
