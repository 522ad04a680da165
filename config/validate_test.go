package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidBaseLoads(t *testing.T) {
	cfg, err := loadMap(t, validBase())
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Len(t, cfg.Servers, 2)
}

// Each case makes one change to a valid config and expects exactly one
// problem, at the given key path.
func TestInvalidConfigs(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
		path   string
	}{
		{"unknown top-level key", func(m map[string]any) { m["subjct"] = "x" }, "subjct"},
		{"unknown nested key", func(m map[string]any) { section(m, "nats", "jetstream")["strem"] = "X" }, "nats.jetstream.strem"},
		{"unknown server key", func(m map[string]any) { section(m, "servers", "docs")["subscriptons"] = []any{} }, "servers.docs.subscriptons"},
		{"unknown subscription key", func(m map[string]any) { sub(m, "docs", 0)["urii"] = "x" }, "servers.docs.subscriptions[0].urii"},
		{"bad duration", func(m map[string]any) { m["shutdown_timeout"] = "soon" }, "shutdown_timeout"},
		{"duration without unit", func(m map[string]any) { section(m, "servers", "docs")["ping_interval"] = 30 }, "servers.docs.ping_interval"},
		{"negative duration", func(m map[string]any) { section(m, "publish")["ack_timeout"] = "-1s" }, "publish.ack_timeout"},
		{"not a number", func(m map[string]any) { section(m, "servers", "docs")["timeout_seconds"] = "abc" }, "servers.docs.timeout_seconds"},
		{"not a bool", func(m map[string]any) { section(m, "nats", "jetstream")["enabled"] = "maybe" }, "nats.jetstream.enabled"},
		{"list where a string goes", func(m map[string]any) { section(m, "log")["level"] = []any{"info"} }, "log.level"},
		{"section that is not a mapping", func(m map[string]any) { m["log"] = "info" }, "log"},
		{"server entry not a mapping", func(m map[string]any) { section(m, "servers")["docs"] = "http://x" }, "servers.docs"},
		{"bad server name", func(m map[string]any) {
			s := section(m, "servers")
			s["my docs"], s["docs"] = s["docs"], nil
			delete(s, "docs")
		}, "servers.my docs"},
		{"neither command nor url", func(m map[string]any) { delete(section(m, "servers", "docs"), "url") }, "servers.docs"},
		{"both command and url", func(m map[string]any) { section(m, "servers", "docs")["command"] = "node" }, "servers.docs"},
		{"unknown transport", func(m map[string]any) { section(m, "servers", "docs")["transport"] = "websocket" }, "servers.docs.transport"},
		{"unknown type alias", func(m map[string]any) { section(m, "servers", "docs")["type"] = "ws" }, "servers.docs.type"},
		{"type and transport", func(m map[string]any) {
			s := section(m, "servers", "docs")
			s["type"], s["transport"] = "http", "streamable-http"
		}, "servers.docs.type"},
		{"url scheme", func(m map[string]any) { section(m, "servers", "docs")["url"] = "ftp://x/mcp" }, "servers.docs.url"},
		{"url without host", func(m map[string]any) { section(m, "servers", "docs")["url"] = "http:///mcp" }, "servers.docs.url"},
		{"stdio with url", func(m map[string]any) { section(m, "servers", "docs")["transport"] = "stdio" }, "servers.docs.url"},
		{"http with command", func(m map[string]any) { section(m, "servers", "local")["transport"] = "sse" }, "servers.local.command"},
		{"zero timeout", func(m map[string]any) { section(m, "servers", "docs")["timeout_seconds"] = 0 }, "servers.docs.timeout_seconds"},
		{"zero max_content_bytes", func(m map[string]any) { section(m, "servers", "docs")["max_content_bytes"] = 0 }, "servers.docs.max_content_bytes"},
		{"zero max_concurrent_reads", func(m map[string]any) { section(m, "servers", "docs")["max_concurrent_reads"] = 0 }, "servers.docs.max_concurrent_reads"},
		{"negative ping_interval", func(m map[string]any) { section(m, "servers", "docs")["ping_interval"] = "-1s" }, "servers.docs.ping_interval"},
		{"env name with =", func(m map[string]any) { section(m, "servers", "local")["env"] = map[string]any{"A=B": "x"} }, "servers.local.env"},
		{"no subscriptions", func(m map[string]any) { section(m, "servers", "docs")["subscriptions"] = []any{} }, "servers.docs.subscriptions"},
		{"subscription without uri", func(m map[string]any) { delete(sub(m, "docs", 0), "uri") }, "servers.docs.subscriptions[0].uri"},
		{"relative uri", func(m map[string]any) { sub(m, "docs", 0)["uri"] = "README.md" }, "servers.docs.subscriptions[0].uri"},
		{"duplicate uri", func(m map[string]any) { sub(m, "local", 1)["uri"] = "file:///a" }, "servers.local.subscriptions[1].uri"},
		{"bad method", func(m map[string]any) { sub(m, "docs", 0)["method"] = "poll" }, "servers.docs.subscriptions[0].method"},
		{"negative handler timeout", func(m map[string]any) { sub(m, "docs", 0)["handler_timeout_seconds"] = -1 }, "servers.docs.subscriptions[0].handler_timeout_seconds"},
		{"subscription subject variable", func(m map[string]any) { sub(m, "docs", 0)["subject"] = "docs.{host}" }, "servers.docs.subscriptions[0].subject"},
		{"subject unknown variable", func(m map[string]any) { m["subject"] = "mcp.{server}.{host}" }, "subject"},
		{"subject wildcard", func(m map[string]any) { m["subject"] = "mcp.*.{reason}" }, "subject"},
		{"subject empty token", func(m map[string]any) { m["subject"] = "mcp..{reason}" }, "subject"},
		{"subject unclosed", func(m map[string]any) { m["subject"] = "mcp.{server" }, "subject"},
		{"multiplier below 1", func(m map[string]any) { section(m, "reconnect")["multiplier"] = 0.5 }, "reconnect.multiplier"},
		{"jitter 1", func(m map[string]any) { section(m, "reconnect")["jitter"] = 1 }, "reconnect.jitter"},
		{"negative jitter", func(m map[string]any) { section(m, "reconnect")["jitter"] = -0.1 }, "reconnect.jitter"},
		{"initial above max", func(m map[string]any) { section(m, "reconnect")["initial_interval"] = "1m" }, "reconnect.initial_interval"},
		{"zero initial interval", func(m map[string]any) { section(m, "reconnect")["initial_interval"] = 0 }, "reconnect.initial_interval"},
		{"server reconnect", func(m map[string]any) { section(m, "servers", "docs", "reconnect")["multiplier"] = 0.9 }, "servers.docs.reconnect.multiplier"},
		{"server reconnect initial above global max", func(m map[string]any) {
			section(m, "servers", "docs", "reconnect")["initial_interval"] = "5m"
		}, "servers.docs.reconnect.initial_interval"},
		{"stream name with dot", func(m map[string]any) { section(m, "nats", "jetstream")["stream"] = "MCP.EVENTS" }, "nats.jetstream.stream"},
		{"stream name with space", func(m map[string]any) { section(m, "nats", "jetstream")["stream"] = "MCP EVENTS" }, "nats.jetstream.stream"},
		{"stream name empty", func(m map[string]any) { section(m, "nats", "jetstream")["stream"] = "" }, "nats.jetstream.stream"},
		{"no stream subjects", func(m map[string]any) { section(m, "nats", "jetstream")["subjects"] = []any{} }, "nats.jetstream.subjects"},
		{"bad stream subject", func(m map[string]any) { section(m, "nats", "jetstream")["subjects"] = []any{"mcp.>.x"} }, "nats.jetstream.subjects[0]"},
		{"negative duplicate window", func(m map[string]any) { section(m, "nats", "jetstream")["duplicate_window"] = "-1m" }, "nats.jetstream.duplicate_window"},
		{"nats url scheme", func(m map[string]any) { section(m, "nats")["url"] = "http://127.0.0.1:4222" }, "nats.url"},
		{"nats url without scheme", func(m map[string]any) { section(m, "nats")["url"] = "127.0.0.1:4222" }, "nats.url"},
		{"nats url list", func(m map[string]any) { section(m, "nats")["url"] = "nats://a:4222, http://b:4222" }, "nats.url"},
		{"embedded port", func(m map[string]any) { section(m, "nats", "embedded")["port"] = 70000 }, "nats.embedded.port"},
		{"embedded port below -1", func(m map[string]any) { section(m, "nats", "embedded")["port"] = -2 }, "nats.embedded.port"},
		{"embedded store dir", func(m map[string]any) {
			section(m, "nats")["url"] = ""
			section(m, "nats", "embedded")["store_dir"] = ""
		}, "nats.embedded.store_dir"},
		{"tls cert without key", func(m map[string]any) { section(m, "nats", "tls")["cert_file"] = "c.pem" }, "nats.tls.key_file"},
		{"tls key without cert", func(m map[string]any) { section(m, "nats", "tls")["key_file"] = "k.pem" }, "nats.tls.cert_file"},
		{"password without user", func(m map[string]any) { section(m, "nats")["password"] = "p" }, "nats.user"},
		{"log level", func(m map[string]any) { section(m, "log")["level"] = "verbose" }, "log.level"},
		{"log format", func(m map[string]any) { section(m, "log")["format"] = "xml" }, "log.format"},
		{"http listen", func(m map[string]any) { section(m, "http")["listen"] = "9464" }, "http.listen"},
		{"zero max_in_flight", func(m map[string]any) { section(m, "publish")["max_in_flight"] = 0 }, "publish.max_in_flight"},
		{"zero max_pending_bytes", func(m map[string]any) { section(m, "publish")["max_pending_bytes"] = 0 }, "publish.max_pending_bytes"},
		{"object store name", func(m map[string]any) { section(m, "publish")["object_store"] = "a.b" }, "publish.object_store"},
		{"zero shutdown timeout", func(m map[string]any) { m["shutdown_timeout"] = "0s" }, "shutdown_timeout"},
		{"zero global concurrent reads", func(m map[string]any) { m["max_concurrent_reads"] = 0 }, "max_concurrent_reads"},
		{"no servers", func(m map[string]any) { delete(m, "servers") }, "servers"},
		{"empty servers", func(m map[string]any) { m["servers"] = map[string]any{} }, "servers"},
		{"servers and mcpServers", func(m map[string]any) { m["mcpServers"] = m["servers"] }, "mcpServers"},
		{"unset variable", func(m map[string]any) {
			section(m, "servers", "docs", "headers")["Authorization"] = "Bearer ${DOCS_TOKEN}"
		}, "servers.docs.headers.Authorization"},
		{"unset variable outside servers", func(m map[string]any) { section(m, "nats")["token"] = "${NATS_TOKEN}" }, "nats.token"},
		{"bad env override", func(m map[string]any) { m["log"] = map[string]any{"level": "debug"} }, "log.level"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validBase()
			tc.change(m)
			environ := []string{"HOME=/home/u"}
			if tc.name == "bad env override" {
				environ = append(environ, "WATCHER_LOG__LEVEL=loud")
			}
			_, err := loadMap(t, m, environ...)
			ps := problemsOf(t, err)
			require.Len(t, ps, 1, "problems:\n%v", err)
			assert.Equal(t, tc.path, ps[0].Path, "problem: %v", ps[0])
			assert.NotEmpty(t, ps[0].Message)
		})
	}
}

// Each case makes one change to a valid config that keeps it valid.
func TestValidVariants(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
	}{
		{"embedded server", func(m map[string]any) { section(m, "nats")["url"] = "" }},
		{"free port", func(m map[string]any) { section(m, "nats", "embedded")["port"] = -1 }},
		{"nats url list", func(m map[string]any) { section(m, "nats")["url"] = "nats://a:4222, tls://b:4222,ws://c:80,wss://d" }},
		{"core nats without subjects", func(m map[string]any) {
			section(m, "nats", "jetstream")["enabled"] = false
			section(m, "nats", "jetstream")["subjects"] = []any{}
		}},
		{"tls pair", func(m map[string]any) {
			section(m, "nats", "tls")["cert_file"] = "c.pem"
			section(m, "nats", "tls")["key_file"] = "k.pem"
		}},
		{"sse", func(m map[string]any) { section(m, "servers", "docs")["transport"] = "sse" }},
		{"type http", func(m map[string]any) { section(m, "servers", "docs")["type"] = "http" }},
		{"https", func(m map[string]any) { section(m, "servers", "docs")["url"] = "https://example.com/mcp" }},
		{"listen method", func(m map[string]any) { sub(m, "docs", 0)["method"] = "subscriptions/listen" }},
		{"subject with uri_hash", func(m map[string]any) { sub(m, "docs", 0)["subject"] = "docs.{uri_hash}.{reason}" }},
		{"keepalive off", func(m map[string]any) { section(m, "servers", "docs")["ping_interval"] = 0 }},
		{"jitter 0", func(m map[string]any) { section(m, "reconnect")["jitter"] = 0 }},
		{"number as string", func(m map[string]any) { section(m, "servers", "docs")["timeout_seconds"] = "${T:-10}" }},
		{"http listen", func(m map[string]any) { section(m, "http")["listen"] = "127.0.0.1:9464" }},
		{"same uri on two servers", func(m map[string]any) { sub(m, "local", 0)["uri"] = "file:///srv/docs/README.md" }},
		{"literal dollar", func(m map[string]any) { section(m, "servers", "local")["args"] = []any{"price$$5", "$HOME"} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validBase()
			tc.change(m)
			_, err := loadMap(t, m)
			require.NoError(t, err)
		})
	}
}

func TestAllProblemsReportedAtOnce(t *testing.T) {
	m := validBase()
	m["subjct"] = "x"
	delete(sub(m, "docs", 0), "uri")
	section(m, "log")["level"] = "loud"
	_, err := loadMap(t, m)
	ps := problemsOf(t, err)
	assert.Equal(t, []string{
		"log.level: must be debug, info, warn or error",
		"servers.docs.subscriptions[0].uri: required",
		"subjct: unknown key; did you mean subject? (see docs/config.md)",
	}, ps.Lines())
	assert.Len(t, strings.Split(err.Error(), "\n"), 3)
}

func TestUnknownKeySuggestion(t *testing.T) {
	m := validBase()
	section(m, "servers", "docs")["subscriptons"] = []any{}
	section(m, "servers", "docs")["zzz"] = 1
	_, err := loadMap(t, m)
	assert.Equal(t, []string{
		"servers.docs.subscriptons: unknown key; did you mean subscriptions? (see docs/config.md)",
		"servers.docs.zzz: unknown key (check the spelling; see docs/config.md)",
	}, problemsOf(t, err).Lines())
}

func TestValidateOnBuiltConfig(t *testing.T) {
	cfg, err := loadMap(t, validBase())
	require.NoError(t, err)
	s := cfg.Servers["docs"]
	s.Subscriptions = append(s.Subscriptions, s.Subscriptions[0])
	cfg.Servers["docs"] = s
	cfg.Log.Format = "yaml"
	ps := problemsOf(t, cfg.Validate())
	assert.Equal(t, []string{
		"log.format: must be text or json",
		"servers.docs.subscriptions[1].uri: duplicate of subscriptions[0].uri; watch each URI once per server",
	}, ps.Lines())
}
