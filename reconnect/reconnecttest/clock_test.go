package reconnecttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/reconnect/reconnecttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case at := <-c:
		return at, true
	default:
		return time.Time{}, false
	}
}

func TestFakeClockFiresOnAdvance(t *testing.T) {
	c := reconnecttest.NewFakeClock(start)
	assert.Equal(t, start, c.Now())
	long := c.NewTimer(2 * time.Second)
	short := c.NewTimer(time.Second)
	assert.Equal(t, 2, c.Waiters())

	c.Advance(999 * time.Millisecond)
	_, ok := fired(short.C())
	assert.False(t, ok, "fired before its deadline")

	c.Advance(time.Millisecond)
	at, ok := fired(short.C())
	require.True(t, ok)
	assert.Equal(t, start.Add(time.Second), at)
	assert.Equal(t, 1, c.Waiters())
	assert.False(t, short.Stop(), "Stop after firing reports false")

	c.Advance(time.Hour)
	_, ok = fired(long.C())
	assert.True(t, ok)
	assert.Zero(t, c.Waiters())
}

func TestFakeClockStop(t *testing.T) {
	c := reconnecttest.NewFakeClock(start)
	tm := c.NewTimer(time.Second)
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop())
	c.Advance(time.Minute)
	_, ok := fired(tm.C())
	assert.False(t, ok, "a stopped timer does not fire")
}

func TestFakeClockZeroDurationFiresAtOnce(t *testing.T) {
	c := reconnecttest.NewFakeClock(start)
	_, ok := fired(c.NewTimer(0).C())
	assert.True(t, ok)
	assert.Zero(t, c.Waiters())
}

func TestFakeClockNextTimerAndBlockUntil(t *testing.T) {
	c := reconnecttest.NewFakeClock(start)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	done := make(chan struct{})
	go func() {
		defer close(done)
		c.NewTimer(3 * time.Second)
		c.NewTimer(time.Second)
	}()
	require.NoError(t, c.BlockUntilContext(ctx, 2))
	<-done
	d, err := c.NextTimer(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, d, "reported in creation order")
	d, err = c.NextTimer(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Second, d)

	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	_, err = c.NextTimer(short)
	assert.ErrorIs(t, err, context.Canceled, "nothing left to report")
	assert.ErrorIs(t, c.BlockUntilContext(short, 3), context.Canceled)
	c.BlockUntil(2) // already true: returns at once
}
