package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate checks c and returns every problem found as Problems, or nil.
// Load already calls it; call it again only on a Config built or changed in
// code. It does not look at the file system or the network.
func (c *Config) Validate() error {
	ps := c.validateGlobal()
	names := make([]string, 0, len(c.Servers))
	for name := range c.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ps = append(ps, validateServer(name, c.Servers[name], c.Reconnect)...)
	}
	if len(ps) == 0 {
		return nil
	}
	return ps.sorted()
}

// validateGlobal checks every key outside servers.
func (c *Config) validateGlobal() Problems {
	var ps Problems
	n := c.NATS
	if n.URL != "" {
		checkNATSURL(n.URL, &ps)
	}
	if n.Embedded.Port < -1 || n.Embedded.Port > 65535 {
		ps.add("nats.embedded.port", "must be between 0 and 65535, or -1 for a free port")
	}
	if n.URL == "" && n.JetStream.Enabled && n.Embedded.StoreDir == "" {
		ps.add("nats.embedded.store_dir", "required for the embedded server with JetStream enabled")
	}
	if js := n.JetStream; js.Enabled {
		if js.Stream == "" || strings.ContainsAny(js.Stream, " \t\r\n.*>/\\") {
			ps.add("nats.jetstream.stream", "must be a stream name without spaces, dots, *, >, / or \\")
		}
		if len(js.Subjects) == 0 {
			ps.add("nats.jetstream.subjects", "at least one subject is required when JetStream is enabled")
		}
		for i, s := range js.Subjects {
			if msg := checkSubject(s, true); msg != "" {
				ps.add(fmt.Sprintf("nats.jetstream.subjects[%d]", i), "%s", msg)
			}
		}
		if js.DuplicateWindow < 0 {
			ps.add("nats.jetstream.duplicate_window", "must not be negative")
		}
	}
	if (n.TLS.CertFile == "") != (n.TLS.KeyFile == "") {
		if n.TLS.CertFile == "" {
			ps.add("nats.tls.cert_file", "required when nats.tls.key_file is set (give both or neither)")
		} else {
			ps.add("nats.tls.key_file", "required when nats.tls.cert_file is set (give both or neither)")
		}
	}
	if n.Password != "" && n.User == "" {
		ps.add("nats.user", "required when nats.password is set")
	}
	if c.Subject == "" {
		ps.add("subject", "required (the default is %s)", DefaultSubject)
	} else if msg := checkTemplate(c.Subject); msg != "" {
		ps.add("subject", "%s", msg)
	}

	p := c.Publish
	positive(&ps, "publish.max_pending_bytes", p.MaxPendingBytes)
	positive(&ps, "publish.max_pending_events", int64(p.MaxPendingEvents))
	positive(&ps, "publish.max_in_flight", int64(p.MaxInFlight))
	positive(&ps, "publish.ack_timeout", int64(p.AckTimeout))
	if p.ObjectStore != "" && !nameRE.MatchString(p.ObjectStore) {
		ps.add("publish.object_store", "must be a bucket name of letters, digits, _ and -")
	}
	validateReconnect("reconnect", c.Reconnect, &ps)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		ps.add("log.level", "must be debug, info, warn or error")
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		ps.add("log.format", "must be text or json")
	}
	if c.HTTP.Listen != "" {
		if _, _, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
			ps.add("http.listen", "must be host:port, such as 127.0.0.1:9464")
		}
	}
	positive(&ps, "shutdown_timeout", int64(c.ShutdownTimeout))
	positive(&ps, "max_concurrent_reads", int64(c.MaxConcurrentReads))
	return ps
}

// validateServer checks one server entry; g is the global reconnect policy.
func validateServer(name string, s Server, g Reconnect) Problems {
	var ps Problems
	path := "servers." + name
	if !nameRE.MatchString(name) {
		ps.add(path, "server names may only use letters, digits, _ and -")
	}
	switch {
	case s.Command == "" && s.URL == "":
		ps.add(path, "set command (to start a local stdio server) or url (for an HTTP server)")
	case s.Command != "" && s.URL != "":
		ps.add(path, "set either command (stdio) or url (sse, streamable-http), not both")
	case s.Transport == TransportStdio && s.URL != "":
		ps.add(path+".url", "not used with transport stdio; set command instead, or transport: streamable-http")
	case (s.Transport == TransportSSE || s.Transport == TransportStreamableHTTP) && s.Command != "":
		ps.add(path+".command", "not used with transport %s; set url instead, or transport: stdio", s.Transport)
	}
	switch s.Transport {
	case TransportStdio, TransportSSE, TransportStreamableHTTP, "":
	default:
		ps.add(path+".transport", "must be stdio, sse or streamable-http")
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.add(path+".url", "must be an http:// or https:// URL with a host")
		}
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			ps.add(path+".env", "variable names must be non-empty and contain no =")
			break
		}
	}
	positive(&ps, path+".timeout_seconds", int64(s.TimeoutSeconds))
	positive(&ps, path+".max_content_bytes", s.MaxContentBytes)
	positive(&ps, path+".max_concurrent_reads", int64(s.MaxConcurrentReads))
	if s.PingInterval < 0 {
		ps.add(path+".ping_interval", "must not be negative (0 turns the keepalive off)")
	}
	if s.Reconnect != g {
		validateReconnect(path+".reconnect", s.Reconnect, &ps)
	}

	if len(s.Subscriptions) == 0 {
		ps.add(path+".subscriptions", "at least one subscription is required")
	}
	seen := map[string]int{}
	for i, sub := range s.Subscriptions {
		sp := fmt.Sprintf("%s.subscriptions[%d]", path, i)
		switch u, err := url.Parse(sub.URI); {
		case sub.URI == "":
			ps.add(sp+".uri", "required")
		case err != nil || u.Scheme == "":
			ps.add(sp+".uri", "must be an absolute URI with a scheme, such as file:///srv/docs/README.md")
		}
		if j, dup := seen[sub.URI]; dup && sub.URI != "" {
			ps.add(sp+".uri", "duplicate of subscriptions[%d].uri; watch each URI once per server", j)
		} else {
			seen[sub.URI] = i
		}
		switch sub.Method {
		case MethodAuto, MethodSubscribe, MethodListen:
		default:
			ps.add(sp+".method", "must be auto, resources/subscribe or subscriptions/listen")
		}
		positive(&ps, sp+".handler_timeout_seconds", int64(sub.HandlerTimeoutSeconds))
		if sub.Subject != "" {
			if msg := checkTemplate(sub.Subject); msg != "" {
				ps.add(sp+".subject", "%s", msg)
			}
		}
	}
	return ps
}

// validateReconnect checks a backoff policy found at path.
func validateReconnect(path string, r Reconnect, ps *Problems) {
	positive(ps, path+".initial_interval", int64(r.InitialInterval))
	positive(ps, path+".max_interval", int64(r.MaxInterval))
	if r.InitialInterval > r.MaxInterval && r.MaxInterval > 0 {
		ps.add(path+".initial_interval", "must not exceed max_interval (%s)", r.MaxInterval)
	}
	if r.Multiplier < 1 {
		ps.add(path+".multiplier", "must be 1 or more")
	}
	if r.Jitter < 0 || r.Jitter >= 1 {
		ps.add(path+".jitter", "must be at least 0 and less than 1")
	}
	if r.ResetAfter < 0 {
		ps.add(path+".reset_after", "must not be negative")
	}
}

// positive records a problem at path unless v > 0.
func positive(ps *Problems, path string, v int64) {
	if v <= 0 {
		ps.add(path, "must be greater than 0")
	}
}

// checkNATSURL checks a comma-separated list of NATS server URLs. Messages
// never repeat the URL, which may hold credentials.
func checkNATSURL(list string, ps *Problems) {
	entries := strings.Split(list, ",")
	for i, e := range entries {
		which := "must be"
		if len(entries) > 1 {
			which = fmt.Sprintf("entry %d must be", i+1)
		}
		e = strings.TrimSpace(e)
		u, err := url.Parse(e)
		if err != nil || !strings.Contains(e, "://") || u.Host == "" {
			ps.add("nats.url", "%s a URL such as nats://127.0.0.1:4222 (leave nats.url empty for the embedded server)", which)
			continue
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			ps.add("nats.url", "%s a nats://, tls://, ws:// or wss:// URL", which)
		}
	}
}

// templateVars are the variables a subject template may use.
var templateVars = []string{"server", "reason", "uri_hash"}

// checkTemplate checks a subject template: known {variables} only, and a
// valid NATS subject for publishing once they are filled in.
func checkTemplate(tmpl string) string {
	s := tmpl
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "has a { without a closing }"
		}
		if v := s[i+1 : i+j]; !slices.Contains(templateVars, v) {
			return fmt.Sprintf("unknown variable {%s}; use {server}, {reason} or {uri_hash}", v)
		}
		s = s[:i] + "x" + s[i+j+1:]
	}
	if strings.Contains(s, "}") {
		return "has a } without an opening {"
	}
	return checkSubject(s, false)
}

// checkSubject checks a NATS subject; wildcards are allowed only if
// wildcards is true (stream subjects, not publish subjects).
func checkSubject(s string, wildcards bool) string {
	if s == "" {
		return "must not be empty"
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return "must not contain spaces"
	}
	toks := strings.Split(s, ".")
	for i, tok := range toks {
		switch {
		case tok == "":
			return "must not have empty tokens (a leading, trailing or doubled .)"
		case !wildcards && (tok == "*" || tok == ">"):
			return "must not contain the wildcards * or > (events are published to it)"
		case tok == ">" && i != len(toks)-1:
			return "may use > only as the last token"
		}
	}
	return ""
}

// dropCovered returns the problems of more whose path is not already covered
// by a problem in have (same path, or a parent of it): a key that failed to
// decode holds a zero value, and reporting that value as well would repeat
// the same mistake.
func dropCovered(have, more Problems) Problems {
	out := have
	for _, p := range more {
		covered := false
		for _, h := range have {
			if p.Path == h.Path || strings.HasPrefix(p.Path, h.Path+".") || strings.HasPrefix(p.Path, h.Path+"[") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}
