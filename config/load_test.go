package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const yamlConfig = `
nats:
  url: nats://127.0.0.1:4222
  jetstream:
    stream: EVENTS
    subjects: ["mcp.events.>", "other.>"]
    duplicate_window: 5m
subject: "mcp.{server}.{reason}"
reconnect: {max_interval: 1m}
shutdown_timeout: 20s
servers:
  docs:
    url: http://127.0.0.1:3001/mcp
    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    timeout_seconds: 10
    subscriptions:
      - uri: file:///srv/docs/README.md
        read_on_start: false
      - uri: file:///srv/docs/guide.md
        method: resources/subscribe
        subject: "docs.{uri_hash}"
  local:
    command: node
    args: ["server.js", "--root", "${ROOT:-/srv}"]
    env: {LEVEL: debug}
    ping_interval: 0s
    subscriptions:
      - uri: file:///a
`

const jsonConfig = `{
  "nats": {
    "url": "nats://127.0.0.1:4222",
    "jetstream": {"stream": "EVENTS", "subjects": ["mcp.events.>", "other.>"], "duplicate_window": "5m"}
  },
  "subject": "mcp.{server}.{reason}",
  "reconnect": {"max_interval": "1m"},
  "shutdown_timeout": "20s",
  "servers": {
    "docs": {
      "url": "http://127.0.0.1:3001/mcp",
      "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
      "timeout_seconds": 10,
      "subscriptions": [
        {"uri": "file:///srv/docs/README.md", "read_on_start": false},
        {"uri": "file:///srv/docs/guide.md", "method": "resources/subscribe", "subject": "docs.{uri_hash}"}
      ]
    },
    "local": {
      "command": "node",
      "args": ["server.js", "--root", "${ROOT:-/srv}"],
      "env": {"LEVEL": "debug"},
      "ping_interval": "0s",
      "subscriptions": [{"uri": "file:///a"}]
    }
  }
}`

const tomlConfig = `
subject = "mcp.{server}.{reason}"
shutdown_timeout = "20s"

[nats]
url = "nats://127.0.0.1:4222"

[nats.jetstream]
stream = "EVENTS"
subjects = ["mcp.events.>", "other.>"]
duplicate_window = "5m"

[reconnect]
max_interval = "1m"

[servers.docs]
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
timeout_seconds = 10

[[servers.docs.subscriptions]]
uri = "file:///srv/docs/README.md"
read_on_start = false

[[servers.docs.subscriptions]]
uri = "file:///srv/docs/guide.md"
method = "resources/subscribe"
subject = "docs.{uri_hash}"

[servers.local]
command = "node"
args = ["server.js", "--root", "${ROOT:-/srv}"]
env = { LEVEL = "debug" }
ping_interval = "0s"

[[servers.local.subscriptions]]
uri = "file:///a"
`

func TestFormatsLoadEqual(t *testing.T) {
	environ := []string{"DOCS_TOKEN=t0k"}
	want, err := Load(writeFile(t, "watcher.yaml", yamlConfig), environ)
	require.NoError(t, err)
	for name, content := range map[string]string{"watcher.yml": yamlConfig, "watcher.json": jsonConfig, "watcher.toml": tomlConfig} {
		got, err := Load(writeFile(t, name, content), environ)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}

	docs := want.Servers["docs"]
	assert.Equal(t, "docs", docs.Name)
	assert.Equal(t, TransportStreamableHTTP, docs.Transport)
	assert.Equal(t, map[string]string{"Authorization": "Bearer t0k"}, docs.Headers)
	assert.Equal(t, 10*time.Second, docs.Timeout())
	assert.Equal(t, Subscription{
		URI: "file:///srv/docs/README.md", Method: MethodAuto, ReadOnStart: false, ReadOnReconnect: true, HandlerTimeoutSeconds: 30,
	}, docs.Subscriptions[0])
	assert.Equal(t, Subscription{
		URI: "file:///srv/docs/guide.md", Method: MethodSubscribe, ReadOnStart: true, ReadOnReconnect: true, HandlerTimeoutSeconds: 30,
		Subject: "docs.{uri_hash}",
	}, docs.Subscriptions[1])
	local := want.Servers["local"]
	assert.Equal(t, TransportStdio, local.Transport)
	assert.Equal(t, []string{"server.js", "--root", "/srv"}, local.Args)
	assert.Equal(t, time.Duration(0), local.PingInterval)
	assert.Equal(t, []string{"mcp.events.>", "other.>"}, want.NATS.JetStream.Subjects)
	assert.Equal(t, 5*time.Minute, want.NATS.JetStream.DuplicateWindow)
	assert.Equal(t, time.Minute, want.Reconnect.MaxInterval)
	assert.Equal(t, time.Minute, docs.Reconnect.MaxInterval, "inherited from the global policy")
}

func TestDefaults(t *testing.T) {
	path := writeFile(t, "watcher.yaml", `
servers:
  docs:
    command: node
    subscriptions: [{uri: "file:///a"}]
`)
	got, err := Load(path, nil)
	require.NoError(t, err)
	global := Reconnect{InitialInterval: 500 * time.Millisecond, MaxInterval: 30 * time.Second, Multiplier: 2, Jitter: 0.2, ResetAfter: time.Minute}
	want := &Config{
		NATS: NATS{
			Embedded:  Embedded{Host: "127.0.0.1", Port: 4222, StoreDir: "./data/nats"},
			JetStream: JetStream{Enabled: true, Stream: "MCP_EVENTS", Subjects: []string{"mcp.events.>"}, CreateStream: true, DuplicateWindow: 2 * time.Minute},
		},
		Subject:            "mcp.events.{server}.{reason}",
		Publish:            Publish{MaxPendingBytes: 64 << 20, MaxPendingEvents: 100000, MaxInFlight: 1024, AckTimeout: 5 * time.Second},
		Reconnect:          global,
		Log:                Log{Level: "info", Format: "text"},
		ShutdownTimeout:    15 * time.Second,
		MaxConcurrentReads: 128,
		Servers: map[string]Server{"docs": {
			Name: "docs", Transport: TransportStdio, Command: "node",
			TimeoutSeconds: 30, MaxContentBytes: 1 << 20, PingInterval: 30 * time.Second, MaxConcurrentReads: 16,
			Reconnect: global,
			Subscriptions: []Subscription{{
				URI: "file:///a", Method: MethodAuto, ReadOnStart: true, ReadOnReconnect: true, HandlerTimeoutSeconds: 30,
			}},
		}},
	}
	assert.Equal(t, want, got)
}

func TestServerReconnectInheritsGlobal(t *testing.T) {
	m := validBase()
	section(m, "reconnect")["multiplier"] = 3
	section(m, "servers", "docs", "reconnect")["initial_interval"] = "1s"
	section(m, "servers", "docs", "reconnect")["jitter"] = 0
	cfg, err := loadMap(t, m)
	require.NoError(t, err)
	assert.Equal(t, Reconnect{
		InitialInterval: time.Second, MaxInterval: 30 * time.Second, Multiplier: 3, Jitter: 0, ResetAfter: time.Minute,
	}, cfg.Servers["docs"].Reconnect, "an explicit jitter: 0 is kept")
	assert.Equal(t, cfg.Reconnect, cfg.Servers["local"].Reconnect)
}

func TestMCPServersAlias(t *testing.T) {
	path := writeFile(t, "claude.json", `{
  "mcpServers": {
    "docs": {
      "type": "http",
      "url": "https://docs.example.com/mcp",
      "headers": {"Authorization": "Bearer ${TOKEN}"},
      "subscriptions": [{"uri": "docs://index"}]
    },
    "events": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "subscriptions": [{"uri": "x://y"}]},
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"],
      "env": {"DEBUG": "1"},
      "subscriptions": [{"uri": "demo://resource/static/document/architecture.md"}]
    }
  }
}`)
	cfg, err := Load(path, []string{"TOKEN=abc"})
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 3)
	assert.Equal(t, TransportStreamableHTTP, cfg.Servers["docs"].Transport)
	assert.Equal(t, "Bearer abc", cfg.Servers["docs"].Headers["Authorization"])
	assert.Equal(t, TransportSSE, cfg.Servers["events"].Transport)
	assert.Equal(t, TransportStdio, cfg.Servers["fs"].Transport)
	assert.Equal(t, map[string]string{"DEBUG": "1"}, cfg.Servers["fs"].Env)
}

func TestContinueOnError(t *testing.T) {
	for _, coe := range []bool{false, true} {
		m := validBase()
		docs := section(m, "servers", "docs")
		docs["continue_on_error"] = coe
		docs["headers"] = map[string]any{"Authorization": "Bearer ${DOCS_TOKEN}"}
		docs["timeout_seconds"] = -1
		cfg, err := loadMap(t, m)
		problems := []string{
			"servers.docs.headers.Authorization: variable DOCS_TOKEN is not set (set it or use ${DOCS_TOKEN:-default})",
			"servers.docs.timeout_seconds: must be greater than 0",
		}
		if !coe {
			assert.Equal(t, problems, problemsOf(t, err).Lines())
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, []Skipped{{Name: "docs", Problems: problems}}, cfg.Skipped)
		assert.NotContains(t, cfg.Servers, "docs")
		assert.Contains(t, cfg.Servers, "local")
	}
}

func TestContinueOnErrorDoesNotHideGlobalProblems(t *testing.T) {
	m := validBase()
	section(m, "servers", "docs")["continue_on_error"] = true
	section(m, "servers", "docs")["transport"] = "carrier-pigeon"
	section(m, "log")["level"] = "loud"
	_, err := loadMap(t, m)
	assert.Equal(t, []string{"log.level: must be debug, info, warn or error"}, problemsOf(t, err).Lines())
}

func TestDisabledServerIsDroppedUnchecked(t *testing.T) {
	m := validBase()
	docs := section(m, "servers", "docs")
	docs["disabled"] = "${DOCS_OFF:-true}"
	docs["headers"] = map[string]any{"Authorization": "Bearer ${DOCS_TOKEN}"}
	cfg, err := loadMap(t, m)
	require.NoError(t, err)
	assert.NotContains(t, cfg.Servers, "docs")
	assert.Empty(t, cfg.Skipped)

	_, err = loadMap(t, m, "DOCS_OFF=false")
	assert.Equal(t, []string{
		"servers.docs.headers.Authorization: variable DOCS_TOKEN is not set (set it or use ${DOCS_TOKEN:-default})",
	}, problemsOf(t, err).Lines())
}

func TestHomeExpansion(t *testing.T) {
	m := validBase()
	section(m, "servers", "local")["command"] = "~/bin/server"
	section(m, "servers", "local")["cwd"] = "~"
	section(m, "servers", "local")["args"] = []any{"~/not-expanded"}
	cfg, err := loadMap(t, m, "HOME=/home/ann")
	require.NoError(t, err)
	local := cfg.Servers["local"]
	assert.Equal(t, "/home/ann/bin/server", local.Command)
	assert.Equal(t, "/home/ann", local.Cwd)
	assert.Equal(t, []string{"~/not-expanded"}, local.Args)

	_, err = loadMap(t, m)
	assert.Equal(t, []string{
		"servers.local.command: cannot expand ~ because HOME is not set (set HOME or write the full path)",
		"servers.local.cwd: cannot expand ~ because HOME is not set (set HOME or write the full path)",
	}, problemsOf(t, err).Lines())
}

func TestFileErrors(t *testing.T) {
	_, err := Load("/nonexistent/watcher.yaml", nil)
	require.EqualError(t, err, "config file /nonexistent/watcher.yaml not found: create it (see docs/config.md) or pass another file with -c FILE")

	_, err = Load(writeFile(t, "watcher.ini", "x=1"), nil)
	require.ErrorContains(t, err, `unsupported extension ".ini"`)

	_, err = Load(writeFile(t, "watcher.yaml", "servers: [unclosed"), nil)
	require.ErrorContains(t, err, "watcher.yaml")
}
