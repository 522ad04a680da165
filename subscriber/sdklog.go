package subscriber

import (
	"context"
	"log/slog"
)

// sdkLogger gives mcp-go a logger whose records are all demoted to debug:
// it logs every GET-stream retry at error level once a second, while the
// watcher already reports losses once per transition.
func sdkLogger(l *slog.Logger, server string) *slog.Logger {
	return slog.New(demote{l.Handler()}).With("server", server, "component", "mcp-go")
}

type demote struct{ h slog.Handler }

func (d demote) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d demote) WithAttrs(as []slog.Attr) slog.Handler { return demote{d.h.WithAttrs(as)} }
func (d demote) WithGroup(g string) slog.Handler       { return demote{d.h.WithGroup(g)} }
