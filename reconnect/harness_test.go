package reconnect_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/reconnect"
	"github.com/mcpwatch/watcher/reconnect/reconnecttest"
)

// waitFor bounds every wait in these tests; nothing here waits on real time
// passing, only on goroutines getting scheduled.
const waitFor = 5 * time.Second

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedPolicy has no jitter, so armed timer durations are exact.
func fixedPolicy() reconnect.Policy {
	return reconnect.Policy{
		InitialInterval: time.Second,
		MaxInterval:     8 * time.Second,
		Multiplier:      2,
		Jitter:          0,
		ResetAfter:      time.Minute,
	}
}

// call is one invocation of the scripted Attempt; the test decides how it
// goes and sends its result.
type call struct {
	ctx         context.Context
	established func()
	result      chan error
}

// harness runs a Supervisor whose attempts are driven by the test, on a fake
// clock.
type harness struct {
	t      *testing.T
	clock  *reconnecttest.FakeClock
	calls  chan *call
	sup    *reconnect.Supervisor
	cancel context.CancelFunc
	done   chan error

	mu     sync.Mutex
	states []reconnect.State
}

type harnessOption func(*reconnect.Options)

func withLogger(l *slog.Logger) harnessOption {
	return func(o *reconnect.Options) { o.Logger = l }
}

// scripted is an Attempt that hands each call to the test through calls.
func scripted(calls chan *call) reconnect.Attempt {
	return func(ctx context.Context, established func()) error {
		c := &call{ctx: ctx, established: established, result: make(chan error)}
		select {
		case calls <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case err := <-c.result:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func newHarness(t *testing.T, p reconnect.Policy, attempt func(chan *call) reconnect.Attempt, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{
		t:     t,
		clock: reconnecttest.NewFakeClock(epoch),
		calls: make(chan *call),
		done:  make(chan error, 1),
	}
	o := reconnect.Options{
		Name:   "srv",
		Policy: p,
		Clock:  h.clock,
		OnState: func(s reconnect.State) {
			h.mu.Lock()
			h.states = append(h.states, s)
			h.mu.Unlock()
		},
	}
	for _, opt := range opts {
		opt(&o)
	}
	h.sup = reconnect.NewSupervisor(o, attempt(h.calls))
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(waitFor):
			t.Errorf("Run did not return after cancel")
		}
	})
	return h
}

func start(t *testing.T, p reconnect.Policy, opts ...harnessOption) *harness {
	t.Helper()
	return newHarness(t, p, scripted, opts...)
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	h.t.Cleanup(cancel)
	return ctx
}

// nextCall waits for the supervisor to start an attempt.
func (h *harness) nextCall() *call {
	h.t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(waitFor):
		h.t.Fatalf("no attempt started")
		return nil
	}
}

// nextWait waits for the supervisor to arm its backoff timer and returns its
// duration.
func (h *harness) nextWait() time.Duration {
	h.t.Helper()
	d, err := h.clock.NextTimer(h.ctx())
	require.NoError(h.t, err, "no backoff timer armed")
	return d
}

// fail runs one attempt that fails before being established and returns the
// armed wait, without firing it.
func (h *harness) fail(err error) time.Duration {
	h.t.Helper()
	h.nextCall().result <- err
	return h.nextWait()
}

// failAndWait is fail, then lets the wait pass.
func (h *harness) failAndWait(err error) time.Duration {
	h.t.Helper()
	d := h.fail(err)
	h.clock.Advance(d)
	return d
}

// session runs one attempt that is established, stays up for up, then is
// lost with err; it returns the armed wait, without firing it.
func (h *harness) session(up time.Duration, err error) time.Duration {
	h.t.Helper()
	c := h.nextCall()
	c.established()
	h.clock.Advance(up)
	c.result <- err
	return h.nextWait()
}

func (h *harness) stop() error {
	h.t.Helper()
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err // for Cleanup
		return err
	case <-time.After(waitFor):
		h.t.Fatalf("Run did not return after cancel")
		return nil
	}
}

func (h *harness) recorded() []reconnect.State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]reconnect.State(nil), h.states...)
}
