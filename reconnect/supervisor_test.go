package reconnect_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/reconnect"
)

var errRefused = errors.New("dial tcp 127.0.0.1:9: connect: connection refused")

func TestSupervisorIntervalsGrowAndAreCapped(t *testing.T) {
	h := start(t, fixedPolicy())
	want := []time.Duration{1, 2, 4, 8, 8, 8}
	for i, w := range want {
		assert.Equal(t, w*time.Second, h.failAndWait(errRefused), "wait after failure %d", i+1)
	}
}

func TestSupervisorJitterStaysWithinBounds(t *testing.T) {
	p := fixedPolicy()
	p.Jitter = 0.2
	h := start(t, p)
	base := p.InitialInterval
	varied := false
	for i := range 20 {
		d := h.failAndWait(errRefused)
		lo := time.Duration(float64(base) * 0.8)
		hi := time.Duration(float64(base) * 1.2)
		require.GreaterOrEqual(t, d, lo, "wait after failure %d", i+1)
		require.LessOrEqual(t, d, hi, "wait after failure %d", i+1)
		varied = varied || d != base
		base = min(2*base, p.MaxInterval)
	}
	assert.True(t, varied, "jitter 0.2 never moved a wait off its base")
}

func TestSupervisorNeverGivesUp(t *testing.T) {
	// 200 failures take far longer than backoff's 15-minute MaxElapsedTime
	// default on the fake clock; the supervisor must keep going.
	h := start(t, fixedPolicy())
	var total time.Duration
	for i := range 200 {
		d := h.failAndWait(errRefused)
		require.Positive(t, d, "wait after failure %d", i+1)
		require.LessOrEqual(t, d, 8*time.Second)
		total += d
	}
	require.Greater(t, total, 15*time.Minute)
	c := h.nextCall()
	assert.Equal(t, 201, h.sup.State().Attempt)
	assert.Equal(t, reconnect.PhaseConnecting, h.sup.State().Phase)
	c.result <- errRefused
}

func TestSupervisorHealthySessionResetsBackoff(t *testing.T) {
	h := start(t, fixedPolicy())
	assert.Equal(t, 1*time.Second, h.failAndWait(errRefused))
	assert.Equal(t, 2*time.Second, h.failAndWait(errRefused))
	assert.Equal(t, 4*time.Second, h.failAndWait(errRefused))
	d := h.session(time.Minute, errors.New("EOF"))
	assert.Equal(t, time.Second, d, "a session up for ResetAfter resets the backoff")
}

func TestSupervisorShortSessionDoesNotResetBackoff(t *testing.T) {
	h := start(t, fixedPolicy())
	assert.Equal(t, 1*time.Second, h.failAndWait(errRefused))
	assert.Equal(t, 2*time.Second, h.failAndWait(errRefused))
	d := h.session(59*time.Second, errors.New("EOF"))
	assert.Equal(t, 4*time.Second, d, "a session shorter than ResetAfter keeps growing the backoff")
	h.clock.Advance(d)
	assert.Equal(t, 8*time.Second, h.failAndWait(errRefused))
}

func TestSupervisorPermanentErrorWaitsMaxInterval(t *testing.T) {
	h := start(t, fixedPolicy())
	bad := reconnect.Permanent(errors.New("parse \"ht!tp://x\": invalid URL"))
	assert.Equal(t, 8*time.Second, h.fail(fmt.Errorf("server srv: connect: %w", bad)))
	st := h.sup.State()
	assert.Equal(t, reconnect.PhaseBackoff, st.Phase)
	assert.True(t, st.Permanent)
	assert.Contains(t, st.LastError, "invalid URL")
	h.clock.Advance(8 * time.Second)

	assert.Equal(t, 8*time.Second, h.failAndWait(bad), "still MaxInterval on the next try")
	assert.Equal(t, time.Second, h.fail(errRefused), "an outage after the fix backs off from the start")
	assert.False(t, h.sup.State().Permanent)
}

func TestSupervisorCancelDuringWaitReturnsAtOnce(t *testing.T) {
	h := start(t, fixedPolicy())
	h.fail(errRefused)
	require.Equal(t, 1, h.clock.Waiters())
	require.NoError(t, h.stop())
	assert.Zero(t, h.clock.Waiters(), "the wait timer is stopped")
	assert.Equal(t, reconnect.PhaseStopped, h.sup.State().Phase)
	assert.True(t, h.sup.State().NextAttempt.IsZero())
}

func TestSupervisorCancelDuringAttemptWaitsForIt(t *testing.T) {
	cancelled := make(chan struct{})
	release := make(chan struct{})
	var returned bool // written by the attempt before it returns; Run returns after
	h := newHarness(t, fixedPolicy(), func(chan *call) reconnect.Attempt {
		return func(ctx context.Context, established func()) error {
			established()
			<-ctx.Done()
			close(cancelled)
			<-release
			returned = true
			return fmt.Errorf("read: %w", ctx.Err())
		}
	})
	require.Eventually(t, func() bool { return h.sup.State().Phase == reconnect.PhaseConnected },
		waitFor, time.Millisecond)
	h.cancel()
	select {
	case <-cancelled:
	case <-time.After(waitFor):
		t.Fatal("the attempt's context was not cancelled")
	}
	select {
	case <-h.done:
		t.Fatal("Run returned before the attempt did")
	default:
	}
	close(release)
	require.NoError(t, h.stop())
	assert.True(t, returned)
	assert.Equal(t, reconnect.PhaseStopped, h.sup.State().Phase)
}

func TestSupervisorStateTransitions(t *testing.T) {
	h := start(t, fixedPolicy())
	assert.Equal(t, reconnect.PhaseStopped, h.sup.State().Phase, "before Run")

	h.failAndWait(errRefused) // attempt 1 fails at epoch, waits 1s
	c := h.nextCall()         // attempt 2
	c.established()
	c.established() // a second call changes nothing
	st := h.sup.State()
	assert.Equal(t, reconnect.PhaseConnected, st.Phase)
	assert.Equal(t, 1, st.Sessions)
	assert.Empty(t, st.LastError, "cleared once connected")
	h.clock.Advance(5 * time.Second)
	c.result <- errors.New("EOF")
	require.Equal(t, 2*time.Second, h.nextWait(), "a 5s session does not reset the backoff")
	c.established() // after the attempt returned: ignored

	got := h.recorded()
	type step struct {
		Phase       reconnect.Phase
		Attempt     int
		Since       time.Duration
		NextAttempt time.Duration // from epoch; -1 = zero
		LastError   string
		Sessions    int
	}
	var steps []step
	for _, s := range got {
		next := time.Duration(-1)
		if !s.NextAttempt.IsZero() {
			next = s.NextAttempt.Sub(epoch)
		}
		steps = append(steps, step{s.Phase, s.Attempt, s.Since.Sub(epoch), next, s.LastError, s.Sessions})
	}
	assert.Equal(t, []step{
		{reconnect.PhaseConnecting, 1, 0, -1, "", 0},
		{reconnect.PhaseBackoff, 1, 0, time.Second, errRefused.Error(), 0},
		{reconnect.PhaseConnecting, 2, time.Second, -1, errRefused.Error(), 0},
		{reconnect.PhaseConnected, 2, time.Second, -1, "", 1},
		{reconnect.PhaseBackoff, 2, 6 * time.Second, 8 * time.Second, "EOF", 1},
	}, steps)
	assert.Equal(t, got[len(got)-1], h.sup.State())

	h.clock.Advance(2 * time.Second)
	c = h.nextCall()
	st = h.sup.State()
	assert.Equal(t, reconnect.PhaseConnecting, st.Phase)
	assert.Equal(t, 1, st.Attempt, "attempts count from 1 again after a session")
	c.established()
	assert.Equal(t, 2, h.sup.State().Sessions)
	c.result <- errors.New("EOF")
	h.nextWait()
	require.NoError(t, h.stop())
	assert.Equal(t, reconnect.PhaseStopped, h.sup.State().Phase)
}

func TestSupervisorNilErrorCountsAsLoss(t *testing.T) {
	h := start(t, fixedPolicy())
	assert.Equal(t, time.Second, h.fail(nil))
	assert.NotEmpty(t, h.sup.State().LastError)
}

func TestSupervisorRunsOnce(t *testing.T) {
	h := start(t, fixedPolicy())
	h.nextCall().result <- errRefused
	h.nextWait()
	assert.Error(t, h.sup.Run(context.Background()))
}
