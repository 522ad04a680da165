package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/watcher/event"
)

// ErrTimeout is returned (wrapped) when the rest of the chain did not
// finish before its deadline.
var ErrTimeout = errors.New("handler timed out")

// Tracker owns the goroutines Timeout starts. Its zero value is not
// usable; create it with NewTracker. The chain's owner calls Wait when
// shutting down.
type Tracker struct {
	log       *slog.Logger
	wg        sync.WaitGroup
	running   atomic.Int64
	abandoned atomic.Int64
}

// NewTracker returns a Tracker logging to logger.
func NewTracker(logger *slog.Logger) *Tracker { return &Tracker{log: logger} }

// Abandoned counts handlers that outlived their deadline so far.
func (t *Tracker) Abandoned() int64 { return t.abandoned.Load() }

// Wait blocks until every handler goroutine has returned or ctx ends; it
// reports how many were still running then.
func (t *Tracker) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%d handlers still running at shutdown: %w", t.running.Load(), ctx.Err())
	}
}

// Timeout bounds the rest of the chain by d (when d > 0; the caller's own
// deadline applies too) and runs it on a goroutine owned by t, so the
// caller gets control back at the deadline even from a handler that
// ignores its context. A timed-out event is logged with server, URI and
// reason and reported as ErrTimeout.
func Timeout(t *Tracker, d time.Duration) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, ev *event.MCPResourceEvent) error {
			if d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			res := make(chan error, 1)
			t.wg.Add(1)
			t.running.Add(1)
			go func() {
				defer t.wg.Done()
				defer t.running.Add(-1)
				res <- next(ctx, ev)
			}()
			select {
			case err := <-res:
				return err
			case <-ctx.Done():
				t.abandoned.Add(1)
				t.log.Error("handler timed out; the event was not delivered and the URI will be read again",
					"server", ev.ClientName, "uri", ev.URI, "reason", ev.Reason, "seq", ev.Seq, "err", ctx.Err())
				return fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
			}
		}
	}
}
