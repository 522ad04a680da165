package reconnect

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Attempt runs one session: it connects, calls established once the session
// is usable (for MCP: initialized and subscribed), and blocks until the
// session is lost or ctx is done. It returns why the session ended; nil is
// expected when ctx is done. established may be called from any goroutine,
// at most once counts, and calls after Attempt returned are ignored. Attempt
// must not leave goroutines running after it returns.
type Attempt func(ctx context.Context, established func()) error

// Options configure a Supervisor. Only Name is required in practice.
type Options struct {
	// Name identifies the upstream in logs (the "server" key).
	Name string
	// Policy is the backoff policy; zero fields take the defaults.
	Policy Policy
	// Clock defaults to RealClock().
	Clock Clock
	// Logger defaults to discarding everything.
	Logger *slog.Logger
	// OnState, if set, is called with the new State on every transition, in
	// order, from the goroutine that made it (Run's, or the one that called
	// established). It must not block and must not call back into the
	// Supervisor other than State().
	OnState func(State)
}

// Supervisor keeps one upstream session alive: attempt, wait when it is lost,
// attempt again, until its context ends. Create it with NewSupervisor and call
// Run once. State is safe for concurrent use.
type Supervisor struct {
	name    string
	policy  Policy
	clock   Clock
	log     *slog.Logger
	onState func(State)
	attempt Attempt
	started atomic.Bool

	// notifyMu serializes transitions so OnState sees them in order; it is
	// taken before mu and held while OnState runs.
	notifyMu sync.Mutex
	mu       sync.Mutex
	state    State
	live     bool      // an attempt is running and may report established
	upSince  time.Time // when the running attempt reported established; zero if not yet
	attemptN int       // Attempt of the running attempt, for the established log
	down     time.Time // when the upstream went down (or Run started)
}

// NewSupervisor returns a Supervisor that runs attempt under opts. It starts
// nothing; call Run.
func NewSupervisor(opts Options, attempt Attempt) *Supervisor {
	clock := opts.Clock
	if clock == nil {
		clock = RealClock()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{
		name:    opts.Name,
		policy:  opts.Policy.normalized(),
		clock:   clock,
		log:     logger.With("server", opts.Name),
		onState: opts.OnState,
		attempt: attempt,
		state:   State{Phase: PhaseStopped, Since: clock.Now()},
	}
}

// State returns a snapshot of the supervised session. It does not block on
// the attempt and is safe for concurrent use.
func (s *Supervisor) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Run attempts sessions until ctx is done: the first attempt starts at once,
// and each lost session or failed attempt is followed by a wait chosen by the
// policy. It blocks; it returns nil after ctx is done and the running attempt
// (if any) has returned, interrupting a wait at once. Run may be called only
// once; a second call returns an error.
func (s *Supervisor) Run(ctx context.Context) error {
	if !s.started.CompareAndSwap(false, true) {
		return fmt.Errorf("reconnect: server %s: Run called twice; a Supervisor runs once", s.name)
	}
	b := s.policy.NewBackOff()
	s.mu.Lock()
	s.down = s.clock.Now()
	s.mu.Unlock()
	var logged string // error text last logged at warn or error in this outage
	attempt := 0
	for {
		if ctx.Err() != nil {
			s.stop()
			return nil
		}
		attempt++
		s.transition(func(st *State) {
			st.Phase = PhaseConnecting
			st.Attempt = attempt
			st.NextAttempt = time.Time{}
		})
		s.log.Debug("connecting", "attempt", attempt)

		up, established, err := s.runAttempt(ctx, attempt)
		if ctx.Err() != nil {
			// Whatever the attempt returned, it ended because we stopped it.
			s.stop()
			return nil
		}
		if err == nil {
			err = errSessionEnded
		}
		permanent := IsPermanent(err)
		if established && up >= s.policy.ResetAfter {
			b.Reset()
		}
		wait := s.policy.MaxInterval
		if !permanent {
			if wait = b.NextBackOff(); wait < 0 { // backoff.Stop; cannot happen with MaxElapsedTime 0
				wait = s.policy.MaxInterval
			}
		}
		now := s.clock.Now()
		next := now.Add(wait)
		if established {
			attempt = 0
			s.mu.Lock()
			s.down = now
			s.mu.Unlock()
			logged = ""
		}
		logged = s.logEnd(err, permanent, established, up, attempt, wait, next, logged)
		s.transition(func(st *State) {
			st.Phase = PhaseBackoff
			st.NextAttempt = next
			st.LastError = err.Error()
			st.Permanent = permanent
		})

		t := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.stop()
			return nil
		case <-t.C():
		}
	}
}

// runAttempt runs one attempt and reports how long its session stayed
// established, if it was.
func (s *Supervisor) runAttempt(ctx context.Context, attempt int) (up time.Duration, established bool, err error) {
	s.mu.Lock()
	s.live, s.upSince, s.attemptN = true, time.Time{}, attempt
	s.mu.Unlock()

	err = s.attempt(ctx, s.established)

	s.mu.Lock()
	s.live = false
	since := s.upSince
	s.mu.Unlock()
	if since.IsZero() {
		return 0, false, err
	}
	return s.clock.Now().Sub(since), true, err
}

// established is the callback handed to each attempt.
func (s *Supervisor) established() {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.mu.Lock()
	if !s.live || !s.upSince.IsZero() {
		s.mu.Unlock()
		return
	}
	now := s.clock.Now()
	s.upSince = now
	s.state.Phase = PhaseConnected
	s.state.Since = now
	s.state.LastError = ""
	s.state.Permanent = false
	s.state.Sessions++
	st, attempt, down := s.state, s.attemptN, now.Sub(s.down)
	s.mu.Unlock()

	s.log.Info("session established", "attempt", attempt, "down", down, "sessions", st.Sessions)
	if s.onState != nil {
		s.onState(st)
	}
}

// transition applies f to the state, stamps Since and reports the result.
func (s *Supervisor) transition(f func(*State)) {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.mu.Lock()
	f(&s.state)
	s.state.Since = s.clock.Now()
	st := s.state
	s.mu.Unlock()
	if s.onState != nil {
		s.onState(st)
	}
}

func (s *Supervisor) stop() {
	s.transition(func(st *State) {
		st.Phase = PhaseStopped
		st.NextAttempt = time.Time{}
	})
	s.log.Debug("supervisor stopped")
}
