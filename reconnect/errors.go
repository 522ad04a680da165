package reconnect

import (
	"errors"

	"github.com/cenkalti/backoff/v4"
)

// errSessionEnded stands in for a nil error from an Attempt that returned
// while its context was still live.
var errSessionEnded = errors.New("reconnect: session ended without an error")

// permanentError marks an error a retry cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }

func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one a retry cannot fix (a bad command path, a
// malformed URL, a 401). Unlike backoff.Permanent it does not stop the
// Supervisor, since a daemon never gives up and the user may fix the server:
// the Supervisor waits MaxInterval before the next try instead of backing off
// from InitialInterval, and logs the error as a configuration problem.
// Permanent(nil) is nil. The result unwraps to err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// Permanent or with backoff.Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	if errors.As(err, &p) {
		return true
	}
	var bp *backoff.PermanentError
	return errors.As(err, &bp)
}
