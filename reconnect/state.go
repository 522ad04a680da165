package reconnect

import "time"

// Phase is where a supervised session is in its life.
type Phase string

// Phases of a supervised session.
const (
	// PhaseConnecting: an attempt is running but has not reported the session
	// usable yet.
	PhaseConnecting Phase = "connecting"
	// PhaseConnected: the attempt called established(); the session is
	// usable (for MCP: initialized and every URI subscribed).
	PhaseConnected Phase = "connected"
	// PhaseBackoff: the last attempt or session ended; the next attempt
	// starts at State.NextAttempt.
	PhaseBackoff Phase = "backoff"
	// PhaseStopped: Run has not started yet or has returned.
	PhaseStopped Phase = "stopped"
)

// State is a snapshot of a supervised session, for readiness checks, metrics
// and status pages.
type State struct {
	Phase Phase
	// Attempt numbers the attempts since the last established session (or
	// since Run started): 1 is the first try after a loss. It keeps its value
	// while connected.
	Attempt int
	// Since is when the current phase began.
	Since time.Time
	// NextAttempt is when the next attempt starts; set only in PhaseBackoff.
	NextAttempt time.Time
	// LastError is the text of the error that ended the last attempt or
	// session; cleared when a session is established.
	LastError string
	// Permanent says LastError was marked Permanent: a configuration problem
	// rather than an outage.
	Permanent bool
	// Sessions counts the sessions established since Run started.
	Sessions int
}
