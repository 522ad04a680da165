package config

import (
	"reflect"
	"strings"
)

// Reflection over the config structs: which keys exist at a path, and the
// closest known key to a misspelt one.

// keyTokens splits a decoder name such as subscriptions[0].uri or
// headers[X-Key] into tokens: "subscriptions", "[0]", "uri".
func keyTokens(name string) []string {
	var out []string
	for _, part := range strings.Split(name, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			switch {
			case i < 0:
				out = append(out, part)
				part = ""
			case i > 0:
				out = append(out, part[:i])
				part = part[i:]
			default:
				j := strings.IndexByte(part, ']')
				if j < 0 {
					out = append(out, part)
					part = ""
					continue
				}
				out = append(out, part[:j+1])
				part = part[j+1:]
			}
		}
	}
	return out
}

// displayPath turns a decoder name into a key path: map keys in brackets
// become .key, list indexes stay [n].
func displayPath(name string) string {
	var b strings.Builder
	for _, tok := range keyTokens(name) {
		if strings.HasPrefix(tok, "[") && !isIndex(tok) {
			tok = tok[1 : len(tok)-1]
		}
		if b.Len() > 0 && !strings.HasPrefix(tok, "[") {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func isIndex(tok string) bool {
	if len(tok) < 3 || tok[0] != '[' {
		return false
	}
	for _, r := range tok[1 : len(tok)-1] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// typeAt returns the type found by following tokens from t: struct fields by
// koanf tag, one token per map key or list index. ok is false when a token
// names no field.
func typeAt(t reflect.Type, tokens []string) (reflect.Type, bool) {
	for _, tok := range tokens {
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByKey(t, tok)
			if !ok {
				return nil, false
			}
			t = f.Type
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	return t, true
}

// fieldByKey finds the field of struct t whose koanf tag is key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag := f.Tag.Get("koanf"); tag != "" && tag != "-" && tag == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keysOf lists the koanf keys of struct t.
func keysOf(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("koanf"); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// unknownKey is the message for a key that no field matches; known are the
// valid keys at that level.
func unknownKey(key string, known []string) string {
	msg := "unknown key (check the spelling; see docs/config.md)"
	if s := closest(key, known); s != "" {
		msg = "unknown key; did you mean " + s + "? (see docs/config.md)"
	}
	return msg
}

// closest returns the known key nearest to key when it is close enough to be
// a likely typo, else "".
func closest(key string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(key), k)
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len(key)/4) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
