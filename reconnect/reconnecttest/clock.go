package reconnecttest

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mcpwatch/watcher/reconnect"
)

// FakeClock is a reconnect.Clock whose time moves only on Advance. It is safe
// for concurrent use.
//
// Every timer created is also queued for NextTimer, so a test can wait until
// the code under test arms its timer and check its duration. The queue is
// unbounded; a test that never calls NextTimer keeps a few bytes per timer.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	armed   []*fakeTimer    // armed timers that have neither fired nor been stopped
	created []time.Duration // durations of created timers not yet taken by NextTimer
	changed chan struct{}   // closed and replaced whenever armed or created changes
}

var _ reconnect.Clock = (*FakeClock)(nil)

// NewFakeClock returns a FakeClock set to start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires when Advance moves the time to or past
// now+d; a timer with d <= 0 fires at once.
func (c *FakeClock) NewTimer(d time.Duration) reconnect.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, deadline: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.created = append(c.created, d)
	if d <= 0 {
		t.ch <- c.now
	} else {
		c.armed = append(c.armed, t)
	}
	c.notifyLocked()
	return t
}

// Advance moves the time forward by d and fires, in deadline order, every
// timer whose deadline has been reached. It does not block.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	sort.SliceStable(c.armed, func(i, j int) bool { return c.armed[i].deadline.Before(c.armed[j].deadline) })
	kept := c.armed[:0]
	for _, t := range c.armed {
		if t.deadline.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now // buffered and sent at most once
	}
	clear(c.armed[len(kept):])
	c.armed = kept
	c.notifyLocked()
}

// Waiters returns how many timers are armed (neither fired nor stopped).
func (c *FakeClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.armed)
}

// BlockUntil blocks until at least n timers are armed. Prefer
// BlockUntilContext in tests, so a bug fails the test instead of hanging it.
func (c *FakeClock) BlockUntil(n int) {
	_ = c.BlockUntilContext(context.Background(), n)
}

// BlockUntilContext blocks until at least n timers are armed or ctx is done,
// and returns ctx's error in the latter case.
func (c *FakeClock) BlockUntilContext(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		ok, ch := len(c.armed) >= n, c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// NextTimer blocks until a timer not yet reported has been created, and
// returns its duration; timers are reported once each, in creation order.
// It returns ctx's error if ctx ends first.
func (c *FakeClock) NextTimer(ctx context.Context) (time.Duration, error) {
	for {
		c.mu.Lock()
		if len(c.created) > 0 {
			d := c.created[0]
			c.created = c.created[1:]
			c.mu.Unlock()
			return d, nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-ch:
		}
	}
}

func (c *FakeClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type fakeTimer struct {
	clock    *FakeClock
	deadline time.Time
	ch       chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

// Stop disarms the timer; it reports whether the timer was armed.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.armed {
		if a == t {
			c.armed = append(c.armed[:i], c.armed[i+1:]...)
			c.notifyLocked()
			return true
		}
	}
	return false
}
