package handlers

import (
	"context"

	"github.com/mcpwatch/watcher/event"
)

// Handler processes one event. A non-nil error means the event was not
// taken; the subscriber reads the URI again later.
type Handler func(ctx context.Context, ev *event.MCPResourceEvent) error

// Handle calls h, so a Handler satisfies subscriber.Sink.
func (h Handler) Handle(ctx context.Context, ev *event.MCPResourceEvent) error { return h(ctx, ev) }

// Middleware wraps a Handler.
type Middleware func(Handler) Handler

// Chain wraps final in mws; the first middleware is the outermost.
func Chain(final Handler, mws ...Middleware) Handler {
	h := final
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}
