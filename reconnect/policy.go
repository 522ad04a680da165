package reconnect

import (
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/mcpwatch/watcher/config"
)

// Default policy values, matching the config defaults.
const (
	DefaultInitialInterval = 500 * time.Millisecond
	DefaultMaxInterval     = 30 * time.Second
	DefaultMultiplier      = 2.0
	DefaultJitter          = 0.2
	DefaultResetAfter      = time.Minute
)

// Policy says how long to wait between session attempts.
type Policy struct {
	// InitialInterval is the first wait after a failure, and the wait after a
	// session that stayed up ResetAfter.
	InitialInterval time.Duration
	// MaxInterval caps the (unjittered) wait; it is also the wait after a
	// Permanent error.
	MaxInterval time.Duration
	// Multiplier grows the wait after each failure; at least 1.
	Multiplier float64
	// Jitter randomizes each wait within ±Jitter of it (0 = none, at most 1).
	Jitter float64
	// ResetAfter: a session that stayed established this long resets the
	// backoff to InitialInterval.
	ResetAfter time.Duration
}

// DefaultPolicy returns the defaults: 500ms doubling up to 30s with ±20%
// jitter, reset after a session stayed up for a minute.
func DefaultPolicy() Policy {
	return Policy{
		InitialInterval: DefaultInitialInterval,
		MaxInterval:     DefaultMaxInterval,
		Multiplier:      DefaultMultiplier,
		Jitter:          DefaultJitter,
		ResetAfter:      DefaultResetAfter,
	}
}

// PolicyFrom converts a config block (already merged with the global
// defaults by config.Load) into a Policy. Zero durations and a zero
// multiplier take the defaults so a hand-built config still works; a zero
// Jitter is kept, since it is a valid choice (no jitter).
func PolicyFrom(c config.Reconnect) Policy {
	return Policy{
		InitialInterval: c.InitialInterval,
		MaxInterval:     c.MaxInterval,
		Multiplier:      c.Multiplier,
		Jitter:          c.Jitter,
		ResetAfter:      c.ResetAfter,
	}.normalized()
}

// normalized fills zero values with defaults and clamps values the backoff
// cannot use (config.Validate reports them to the user; this only keeps the
// supervisor sane if it is handed a policy that skipped validation).
func (p Policy) normalized() Policy {
	if p.InitialInterval <= 0 {
		p.InitialInterval = DefaultInitialInterval
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = DefaultMaxInterval
	}
	if p.MaxInterval < p.InitialInterval {
		p.MaxInterval = p.InitialInterval
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultMultiplier
	}
	if p.Multiplier < 1 {
		p.Multiplier = 1
	}
	if p.Jitter < 0 {
		p.Jitter = 0
	}
	if p.Jitter > 1 {
		p.Jitter = 1
	}
	if p.ResetAfter <= 0 {
		p.ResetAfter = DefaultResetAfter
	}
	return p
}

// NewBackOff returns a fresh exponential backoff for p that never gives up
// (MaxElapsedTime 0). The result is not safe for concurrent use; each
// supervisor owns its own.
func (p Policy) NewBackOff() backoff.BackOff {
	p = p.normalized()
	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.InitialInterval),
		backoff.WithMaxInterval(p.MaxInterval),
		backoff.WithMultiplier(p.Multiplier),
		backoff.WithRandomizationFactor(p.Jitter),
		backoff.WithMaxElapsedTime(0),
	)
	return b
}
