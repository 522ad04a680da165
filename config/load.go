package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// Load reads the config file at path (.yaml, .yml, .json or .toml), expands
// ${VAR} references and ~, applies WATCHER_* overrides and defaults, and
// validates the result. Variables and overrides come from environ (KEY=VALUE
// entries, as from os.Environ), never from the process directly.
//
// An invalid configuration yields a Problems error listing every problem.
// A server entry with problems and continue_on_error: true is left out of
// Servers and listed in Skipped instead; disabled entries are left out
// silently (and not checked). Other errors (no such file, a syntax error)
// are returned as plain errors. Load does not block on anything but the read.
func Load(path string, environ []string) (*Config, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, err
	}
	e := newEnv(environ)
	var ps Problems

	servers := takeServers(raw, &ps)
	interpolateTree(raw, "", e, &ps)
	expandHomeFiles(raw, e, &ps)
	applyEnv(raw, environ, &ps)
	fillDefaults(raw, topDefaults())

	cfg := &Config{}
	decode(raw, cfg, "", &ps)
	ps = dropCovered(ps, cfg.validateGlobal())

	cfg.Servers = map[string]Server{}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s, sps, opts := loadServer(name, servers[name], e, cfg.Reconnect)
		switch {
		case opts.disabled:
		case len(sps) > 0 && opts.continueOnError:
			cfg.Skipped = append(cfg.Skipped, Skipped{Name: name, Problems: sps.sorted().Lines()})
		case len(sps) > 0:
			ps = append(ps, sps...)
		default:
			cfg.Servers[name] = s
		}
	}
	if len(ps) > 0 {
		return nil, ps.sorted()
	}
	return cfg, nil
}

// readFile parses the file at path with the parser its extension names.
func readFile(path string) (map[string]any, error) {
	var parser koanf.Parser
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		parser = yaml.Parser()
	case ".json":
		parser = json.Parser()
	case ".toml":
		parser = toml.Parser()
	default:
		return nil, fmt.Errorf("config file %s: unsupported extension %q; name it .yaml, .yml, .json or .toml", path, ext)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config file %s not found: create it (see docs/config.md) or pass another file with -c FILE", path)
	}
	k := koanf.New(".")
	if err := k.Load(file.Provider(path), parser); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	m, _ := normalize(k.Raw()).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// normalize makes every map a map[string]any and every list a []any, whatever
// the parser produced.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	case []map[string]any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = normalize(x)
		}
		return l
	}
	return v
}

// takeServers removes servers (or its alias mcpServers) from raw and returns
// the entries by name.
func takeServers(raw map[string]any, ps *Problems) map[string]any {
	s, hasS := raw["servers"]
	a, hasA := raw["mcpServers"]
	delete(raw, "servers")
	delete(raw, "mcpServers")
	key, v := "servers", s
	switch {
	case hasS && hasA:
		ps.add("mcpServers", "is an alias of servers; use one of them, not both")
	case hasA:
		key, v = "mcpServers", a
	}
	m, ok := v.(map[string]any)
	switch {
	case v != nil && !ok:
		ps.add(key, "must be a mapping of server names to server entries (see docs/config.md)")
	case len(m) == 0:
		ps.add(key, "at least one server is required (see docs/config.md)")
	}
	return m
}

// expandHomeFiles expands ~ in the file paths outside servers.
func expandHomeFiles(raw map[string]any, e env, ps *Problems) {
	nats, _ := raw["nats"].(map[string]any)
	if nats == nil {
		return
	}
	expandHome(nats, "creds_file", "nats", e, ps)
	expandHome(nats, "nkey_file", "nats", e, ps)
	if emb, ok := nats["embedded"].(map[string]any); ok {
		expandHome(emb, "store_dir", "nats.embedded", e, ps)
	}
	if tls, ok := nats["tls"].(map[string]any); ok {
		for _, k := range []string{"ca_file", "cert_file", "key_file"} {
			expandHome(tls, k, "nats.tls", e, ps)
		}
	}
}

type serverOpts struct{ disabled, continueOnError bool }

// loadServer turns the raw entry v of server name into a Server, with its
// defaults, transport and reconnect policy resolved (g is the global
// policy), and returns every problem found in it.
func loadServer(name string, v any, e env, g Reconnect) (Server, Problems, serverOpts) {
	var (
		s    Server
		ps   Problems
		opts serverOpts
		path = "servers." + name
	)
	m, ok := v.(map[string]any)
	if !ok {
		ps.add(path, "must be a mapping with command or url (see docs/config.md)")
		return s, ps, opts
	}
	// A disabled entry is dropped before anything else is checked, so that
	// it may refer to variables that are not set.
	if d, ok := m["disabled"].(string); ok {
		if out, err := interpolate(d, e); err == nil {
			if b, err := strconv.ParseBool(strings.TrimSpace(out)); err == nil {
				m["disabled"] = b
			}
		}
	}
	if m["disabled"] == true {
		opts.disabled = true
		return s, nil, opts
	}

	interpolateTree(m, path, e, &ps)
	switch c := m["continue_on_error"].(type) {
	case bool:
		opts.continueOnError = c
	case string:
		opts.continueOnError, _ = strconv.ParseBool(strings.TrimSpace(c))
	}
	resolveType(m, path, &ps)
	expandHome(m, "command", path, e, &ps)
	expandHome(m, "cwd", path, e, &ps)
	fillDefaults(m, serverDefaults(g))
	if subs, ok := m["subscriptions"].([]any); ok {
		for _, sub := range subs {
			if sm, ok := sub.(map[string]any); ok {
				fillDefaults(sm, subscriptionDefaults())
			}
		}
	}

	decode(m, &s, path, &ps)
	s.Name = name
	if s.Transport == "" {
		switch {
		case s.Command != "" && s.URL == "":
			s.Transport = TransportStdio
		case s.URL != "" && s.Command == "":
			s.Transport = TransportStreamableHTTP
		}
	}
	ps = dropCovered(ps, validateServer(name, s, g))
	return s, ps, opts
}

// resolveType maps the alias type (Claude's stdio | sse | http) to transport.
func resolveType(m map[string]any, path string, ps *Problems) {
	t, ok := m["type"]
	if !ok {
		return
	}
	delete(m, "type")
	if _, both := m["transport"]; both {
		ps.add(path+".type", "is an alias of transport; use one of them, not both")
		return
	}
	switch t {
	case "stdio", "sse":
		m["transport"] = t
	case "http", TransportStreamableHTTP:
		m["transport"] = TransportStreamableHTTP
	default:
		ps.add(path+".type", "must be stdio, sse or http")
	}
}
