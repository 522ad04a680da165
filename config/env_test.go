package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvOverrides(t *testing.T) {
	m := validBase()
	section(m, "nats", "jetstream")["stream"] = "FROM_FILE"
	cfg, err := loadMap(t, m,
		"WATCHER_NATS__URL=nats://other:4222",
		"WATCHER_NATS__JETSTREAM__ENABLED=false",
		"WATCHER_NATS__JETSTREAM__STREAM=FROM_ENV",
		"WATCHER_NATS__JETSTREAM__SUBJECTS=a.>, b.>",
		"WATCHER_NATS__EMBEDDED__PORT=-1",
		"WATCHER_NATS__TOKEN=${NOT_INTERPOLATED}",
		"WATCHER_SHUTDOWN_TIMEOUT=45s",
		"WATCHER_RECONNECT__MULTIPLIER=1.5",
		"WATCHER_LOG__EVENTS=true",
		"WATCHER_PUBLISH__MAX_PENDING_BYTES=1024",
		"UNRELATED=1",
	)
	require.NoError(t, err)
	assert.Equal(t, "nats://other:4222", cfg.NATS.URL)
	assert.False(t, cfg.NATS.JetStream.Enabled)
	assert.Equal(t, "FROM_ENV", cfg.NATS.JetStream.Stream, "the environment wins over the file")
	assert.Equal(t, []string{"a.>", "b.>"}, cfg.NATS.JetStream.Subjects)
	assert.Equal(t, -1, cfg.NATS.Embedded.Port)
	assert.Equal(t, "${NOT_INTERPOLATED}", cfg.NATS.Token)
	assert.Equal(t, 45*time.Second, cfg.ShutdownTimeout)
	assert.Equal(t, 1.5, cfg.Reconnect.Multiplier)
	assert.Equal(t, 1.5, cfg.Servers["docs"].Reconnect.Multiplier, "servers inherit the overridden policy")
	assert.True(t, cfg.Log.Events)
	assert.Equal(t, int64(1024), cfg.Publish.MaxPendingBytes)
}

func TestEnvOverrideProblems(t *testing.T) {
	_, err := loadMap(t, validBase(),
		"WATCHER_NATS__JETSTREAM__ENABLED=maybe",
		"WATCHER_SHUTDOWN_TIMEOUT=10",
		"WATCHER_NATS__URLL=nats://x",
		"WATCHER_NATS=nats://x",
		"WATCHER_SERVERS__DOCS__URL=http://x",
		"WATCHER_NATS____URL=x",
		"WATCHER_TEST_LOG=1",
	)
	assert.Equal(t, []string{
		"WATCHER_NATS: nats is a section; set one of its keys, such as WATCHER_NATS__URL",
		"WATCHER_NATS__URLL: no such config key nats.urll (check the spelling; variables are WATCHER_ plus the key path upper-cased, with __ between levels; see docs/config.md)",
		"WATCHER_NATS____URL: no such config key nats..url (check the spelling; variables are WATCHER_ plus the key path upper-cased, with __ between levels; see docs/config.md)",
		"WATCHER_SERVERS__DOCS__URL: environment overrides do not apply inside servers; use ${VAR} in the server entry instead",
		"nats.jetstream.enabled: must be true or false",
		"shutdown_timeout: must be a duration with a unit, such as 500ms, 30s or 2m",
	}, problemsOf(t, err).Lines())
}
