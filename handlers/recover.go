package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mcpwatch/watcher/event"
)

// PanicError is returned by Recover when a handler panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("handler panicked: %v", e.Value) }

// Recover turns a panic in the rest of the chain into a *PanicError, logged
// with server, URI and reason.
func Recover(logger *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, ev *event.MCPResourceEvent) (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = &PanicError{Value: v, Stack: debug.Stack()}
					logger.Error("handler panicked", "server", ev.ClientName, "uri", ev.URI, "reason", ev.Reason, "seq", ev.Seq, "err", err, "stack", string(err.(*PanicError).Stack))
				}
			}()
			return next(ctx, ev)
		}
	}
}
