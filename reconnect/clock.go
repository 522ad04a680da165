package reconnect

import "time"

// Clock is the source of time for a Supervisor, so tests can drive time
// without waiting (see reconnecttest.FakeClock). Implementations must be safe
// for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that delivers the time on C once d has passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, like *time.Timer.
type Timer interface {
	// C delivers the time once when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did so
	// (false if the timer already fired or was stopped).
	Stop() bool
}

// RealClock returns the Clock of the time package.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }

func (t realTimer) Stop() bool { return t.t.Stop() }
