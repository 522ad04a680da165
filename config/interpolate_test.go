package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterpolate(t *testing.T) {
	e := newEnv([]string{"A=x", "EMPTY=", "URL=http://h:1/p", "A=y"})
	cases := []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "y"}, // the later entry wins
		{in: "pre-${A}-post", want: "pre-y-post"},
		{in: "${env:A}", want: "y"},
		{in: "${B:-def}", want: "def"},
		{in: "${env:B:-def}", want: "def"},
		{in: "${B:-}", want: ""},
		{in: "${B:-http://h:1/x}", want: "http://h:1/x"},
		{in: "${EMPTY:-def}", want: "def"},
		{in: "${EMPTY}", want: ""},
		{in: "${A}${URL}", want: "yhttp://h:1/p"},
		{in: "a$$b", want: "a$b"},
		{in: "$${A}", want: "${A}"},
		{in: "$$$${A}", want: "$${A}"},
		{in: "cost $5 and $A", want: "cost $5 and $A"},
		{in: "end$", want: "end$"},
		{in: "${B}", err: "variable B is not set (set it or use ${B:-default})"},
		{in: "${env:B}", err: "variable B is not set (set it or use ${B:-default})"},
		{in: "${A", err: "unterminated ${ (close it with }, or write $$ for a literal $)"},
		{in: "${}", err: "${} is not a valid variable reference (use ${NAME}, ${env:NAME} or ${NAME:-default})"},
		{in: "${1A}", err: "${1A} is not a valid variable reference (use ${NAME}, ${env:NAME} or ${NAME:-default})"},
	}
	for _, tc := range cases {
		got, err := interpolate(tc.in, e)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestInterpolationEverywhere(t *testing.T) {
	m := validBase()
	section(m, "nats")["url"] = "${NATS_URL}"
	section(m, "nats")["token"] = "${env:NATS_TOKEN}"
	docs := section(m, "servers", "docs")
	docs["url"] = "http://${HOST:-127.0.0.1}:${PORT}/mcp"
	docs["headers"] = map[string]any{"Authorization": "Bearer ${TOKEN}", "X-Static": "$$literal"}
	sub(m, "docs", 0)["uri"] = "file://${DOCS_DIR}/README.md"
	local := section(m, "servers", "local")
	local["args"] = []any{"--token", "${TOKEN}", "--mode=${MODE:-fast}"}
	local["env"] = map[string]any{"API_KEY": "${TOKEN}", "NESTED": "a-${MODE:-b}-c"}
	local["cwd"] = "${DOCS_DIR}"

	cfg, err := loadMap(t, m,
		"NATS_URL=nats://n:4222", "NATS_TOKEN=nt", "PORT=3001", "TOKEN=s3cret", "DOCS_DIR=/srv/docs")
	require.NoError(t, err)
	assert.Equal(t, "nats://n:4222", cfg.NATS.URL)
	assert.Equal(t, "nt", cfg.NATS.Token)
	d := cfg.Servers["docs"]
	assert.Equal(t, "http://127.0.0.1:3001/mcp", d.URL)
	assert.Equal(t, map[string]string{"Authorization": "Bearer s3cret", "X-Static": "$literal"}, d.Headers)
	assert.Equal(t, "file:///srv/docs/README.md", d.Subscriptions[0].URI)
	l := cfg.Servers["local"]
	assert.Equal(t, []string{"--token", "s3cret", "--mode=fast"}, l.Args)
	assert.Equal(t, map[string]string{"API_KEY": "s3cret", "NESTED": "a-b-c"}, l.Env)
	assert.Equal(t, "/srv/docs", l.Cwd)
}

func TestInterpolationErrorsNameKeyNotValue(t *testing.T) {
	m := validBase()
	section(m, "servers", "docs", "headers")["Authorization"] = "Bearer ${TOKEN} ${DOCS_TOKEN}"
	section(m, "servers", "local")["args"] = []any{"ok", "${MISSING_ARG}"}
	section(m, "servers", "local")["env"] = map[string]any{"KEY": "${TOKEN}${MISSING_ENV}"}
	_, err := loadMap(t, m, "TOKEN=hunter2")
	assert.Equal(t, []string{
		"servers.docs.headers.Authorization: variable DOCS_TOKEN is not set (set it or use ${DOCS_TOKEN:-default})",
		"servers.local.args[1]: variable MISSING_ARG is not set (set it or use ${MISSING_ARG:-default})",
		"servers.local.env.KEY: variable MISSING_ENV is not set (set it or use ${MISSING_ENV:-default})",
	}, problemsOf(t, err).Lines())
	assert.NotContains(t, err.Error(), "hunter2")
}

func TestInterpolatedScalars(t *testing.T) {
	m := validBase()
	section(m, "nats", "jetstream")["enabled"] = "${JS:-true}"
	section(m, "servers", "docs")["timeout_seconds"] = "${TIMEOUT}"
	section(m, "servers", "docs")["ping_interval"] = "${PING:-10s}"
	section(m, "reconnect")["multiplier"] = "${MULT}"
	cfg, err := loadMap(t, m, "JS=false", "TIMEOUT=7", "MULT=1.5")
	require.NoError(t, err)
	assert.False(t, cfg.NATS.JetStream.Enabled)
	assert.Equal(t, 7, cfg.Servers["docs"].TimeoutSeconds)
	assert.Equal(t, "10s", cfg.Servers["docs"].PingInterval.String())
	assert.Equal(t, 1.5, cfg.Reconnect.Multiplier)
}
