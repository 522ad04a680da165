package reconnect

import (
	"context"
	"log/slog"
	"time"
)

// logEnd logs why an attempt or session ended and returns the error text now
// considered logged. A lost session always logs (it starts an outage); a
// failed attempt logs at warn (error for a Permanent one) only when its error
// text differs from the last one logged in this outage, and at debug
// otherwise, so a server that stays down does not flood the log.
func (s *Supervisor) logEnd(err error, permanent, established bool, up time.Duration, attempt int, wait time.Duration, next time.Time, logged string) string {
	text := err.Error()
	if established {
		level, msg := slog.LevelWarn, "session lost, reconnecting"
		if permanent {
			level, msg = slog.LevelError, "session lost to a configuration problem; fix the server or its config, retrying at the maximum interval"
		}
		s.log.Log(context.Background(), level, msg,
			"err", text, "uptime", up, "wait", wait, "next_attempt", next)
		return text
	}
	level, msg := slog.LevelWarn, "connect failed, retrying"
	if permanent {
		level, msg = slog.LevelError, "cannot connect: configuration problem; fix the server or its config, retrying at the maximum interval"
	}
	if text == logged {
		level = slog.LevelDebug
	}
	s.log.Log(context.Background(), level, msg,
		"attempt", attempt, "err", text, "wait", wait, "next_attempt", next)
	return text
}
