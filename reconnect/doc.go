// Package reconnect keeps one upstream session alive forever: it runs an
// Attempt, waits a jittered exponential backoff when the session is lost, and
// tries again until its context ends.
//
// It knows nothing of MCP. A caller (the subscriber package) hands a
// Supervisor an Attempt that connects, reports when the session became usable
// and blocks until the session is lost. The Supervisor decides how long to
// wait before the next attempt (Policy), keeps a State that operations code
// can read at any time, and logs transitions once rather than on every retry.
//
// The backoff never gives up (a daemon must not stop watching after the
// 15-minute MaxElapsedTime default of cenkalti/backoff), resets only after a
// session stayed established for Policy.ResetAfter, and turns errors marked
// Permanent (configuration problems) into slow retries at MaxInterval.
//
// Time comes from a Clock so tests drive it without waiting; see the
// reconnecttest package for a fake clock.
package reconnect
