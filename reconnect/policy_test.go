package reconnect_test

import (
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/reconnect"
)

func TestPolicyFrom(t *testing.T) {
	valid := config.Reconnect{
		InitialInterval: 250 * time.Millisecond,
		MaxInterval:     10 * time.Second,
		Multiplier:      3,
		Jitter:          0.1,
		ResetAfter:      2 * time.Minute,
	}
	cases := []struct {
		name   string
		change func(*config.Reconnect)
		want   func(*reconnect.Policy)
	}{
		{"copied as is", func(*config.Reconnect) {}, func(*reconnect.Policy) {}},
		{"zero initial interval takes the default",
			func(c *config.Reconnect) { c.InitialInterval = 0 },
			func(p *reconnect.Policy) { p.InitialInterval = reconnect.DefaultInitialInterval }},
		{"zero max interval takes the default",
			func(c *config.Reconnect) { c.MaxInterval = 0 },
			func(p *reconnect.Policy) { p.MaxInterval = reconnect.DefaultMaxInterval }},
		{"zero multiplier takes the default",
			func(c *config.Reconnect) { c.Multiplier = 0 },
			func(p *reconnect.Policy) { p.Multiplier = reconnect.DefaultMultiplier }},
		{"zero jitter is kept",
			func(c *config.Reconnect) { c.Jitter = 0 },
			func(p *reconnect.Policy) { p.Jitter = 0 }},
		{"zero reset after takes the default",
			func(c *config.Reconnect) { c.ResetAfter = 0 },
			func(p *reconnect.Policy) { p.ResetAfter = reconnect.DefaultResetAfter }},
		{"max below initial is raised to initial",
			func(c *config.Reconnect) { c.MaxInterval = 100 * time.Millisecond },
			func(p *reconnect.Policy) { p.MaxInterval = 250 * time.Millisecond }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := valid
			tc.change(&c)
			want := reconnect.Policy{
				InitialInterval: valid.InitialInterval,
				MaxInterval:     valid.MaxInterval,
				Multiplier:      valid.Multiplier,
				Jitter:          valid.Jitter,
				ResetAfter:      valid.ResetAfter,
			}
			tc.want(&want)
			assert.Equal(t, want, reconnect.PolicyFrom(c))
		})
	}
}

func TestPolicyFromEmptyIsDefaultExceptJitter(t *testing.T) {
	want := reconnect.DefaultPolicy()
	want.Jitter = 0
	assert.Equal(t, want, reconnect.PolicyFrom(config.Reconnect{}))
}

func TestNewBackOffGrowsAndCaps(t *testing.T) {
	b := fixedPolicy().NewBackOff()
	want := []time.Duration{1, 2, 4, 8, 8, 8, 8}
	for i, w := range want {
		assert.Equal(t, w*time.Second, b.NextBackOff(), "backoff %d", i)
	}
	b.Reset()
	assert.Equal(t, time.Second, b.NextBackOff(), "after Reset")
}

func TestNewBackOffNeverStops(t *testing.T) {
	b := reconnect.DefaultPolicy().NewBackOff()
	eb, ok := b.(*backoff.ExponentialBackOff)
	require.True(t, ok)
	assert.Zero(t, eb.MaxElapsedTime)
	assert.Equal(t, reconnect.DefaultJitter, eb.RandomizationFactor)
	for i := range 1000 {
		require.NotEqual(t, backoff.Stop, b.NextBackOff(), "backoff %d", i)
	}
}
