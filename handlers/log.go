package handlers

import (
	"context"
	"log/slog"

	"github.com/mcpwatch/watcher/event"
)

// Log logs one line per event that the rest of the chain took (log.events).
func Log(logger *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, ev *event.MCPResourceEvent) error {
			err := next(ctx, ev)
			if err == nil {
				logger.Info("event", "server", ev.ClientName, "uri", ev.URI, "reason", ev.Reason,
					"seq", ev.Seq, "bytes", ev.ContentBytes, "sha256", ev.ContentSHA256[:min(12, len(ev.ContentSHA256))], "id", ev.ID)
			}
			return err
		}
	}
}
