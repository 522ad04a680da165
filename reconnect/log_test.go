package reconnect_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/reconnect"
)

// line is one recorded log record with its attributes flattened.
type line struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// recorder is a slog.Handler that keeps every record for the test.
type recorder struct {
	mu    *sync.Mutex
	lines *[]line
	attrs []slog.Attr
}

func newRecorder() *recorder { return &recorder{mu: new(sync.Mutex), lines: new([]line)} }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	l := line{Level: rec.Level, Msg: rec.Message, Attrs: map[string]any{}}
	for _, a := range r.attrs {
		l.Attrs[a.Key] = a.Value.Any()
	}
	rec.Attrs(func(a slog.Attr) bool {
		l.Attrs[a.Key] = a.Value.Any()
		return true
	})
	r.mu.Lock()
	*r.lines = append(*r.lines, l)
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(slices.Clone(r.attrs), as...)
	return &c
}

func (r *recorder) WithGroup(string) slog.Handler { return r } // unused by the supervisor

// take returns the lines recorded since the last take.
func (r *recorder) take() []line {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := *r.lines
	*r.lines = nil
	return l
}

// above returns the lines at info or above.
func above(ls []line) []line {
	var out []line
	for _, l := range ls {
		if l.Level >= slog.LevelInfo {
			out = append(out, l)
		}
	}
	return out
}

func TestLogDedupsRepeatedFailures(t *testing.T) {
	rec := newRecorder()
	h := start(t, fixedPolicy(), withLogger(slog.New(rec)))

	for range 10 {
		h.failAndWait(errRefused)
	}
	lines := rec.take()
	loud := above(lines)
	require.Len(t, loud, 1, "one warn for the same error repeated 10 times")
	assert.Equal(t, slog.LevelWarn, loud[0].Level)
	assert.Equal(t, "srv", loud[0].Attrs["server"])
	assert.Equal(t, errRefused.Error(), loud[0].Attrs["err"])
	assert.EqualValues(t, 1, loud[0].Attrs["attempt"])
	assert.Equal(t, time.Second, loud[0].Attrs["wait"])
	assert.Equal(t, epoch.Add(time.Second), loud[0].Attrs["next_attempt"])
	var quiet int
	for _, l := range lines {
		if l.Level == slog.LevelDebug && l.Attrs["err"] == errRefused.Error() {
			quiet++
		}
	}
	assert.Equal(t, 9, quiet, "the repeats are logged at debug")

	other := errors.New("dial tcp: lookup nowhere.invalid: no such host")
	h.failAndWait(other)
	loud = above(rec.take())
	require.Len(t, loud, 1, "a different error logs again")
	assert.Equal(t, other.Error(), loud[0].Attrs["err"])
	assert.EqualValues(t, 11, loud[0].Attrs["attempt"])

	h.failAndWait(other)
	assert.Empty(t, above(rec.take()))

	down := h.clock.Now().Sub(epoch)
	c := h.nextCall()
	c.established()
	loud = above(rec.take())
	require.Len(t, loud, 1)
	assert.Equal(t, slog.LevelInfo, loud[0].Level)
	assert.Equal(t, "session established", loud[0].Msg)
	assert.EqualValues(t, 13, loud[0].Attrs["attempt"])
	assert.Equal(t, down, loud[0].Attrs["down"])

	h.clock.Advance(time.Minute)
	lost := errors.New("unexpected EOF")
	c.result <- lost
	d := h.nextWait()
	loud = above(rec.take())
	require.Len(t, loud, 1, "a lost session logs once")
	assert.Equal(t, slog.LevelWarn, loud[0].Level)
	assert.Equal(t, lost.Error(), loud[0].Attrs["err"])
	assert.Equal(t, time.Minute, loud[0].Attrs["uptime"])
	assert.Equal(t, d, loud[0].Attrs["wait"])
	h.clock.Advance(d)

	h.failAndWait(lost)
	assert.Empty(t, above(rec.take()), "the same error right after the loss is not news")
	h.failAndWait(errRefused)
	loud = above(rec.take())
	require.Len(t, loud, 1, "an error seen in an earlier outage is news again")
	assert.EqualValues(t, 2, loud[0].Attrs["attempt"])
}

func TestLogPermanentAsConfigurationProblem(t *testing.T) {
	rec := newRecorder()
	h := start(t, fixedPolicy(), withLogger(slog.New(rec)))
	bad := reconnect.Permanent(errors.New("exec: \"/nope\": stat /nope: no such file or directory"))
	for range 3 {
		h.failAndWait(bad)
	}
	loud := above(rec.take())
	require.Len(t, loud, 1)
	assert.Equal(t, slog.LevelError, loud[0].Level)
	assert.Contains(t, loud[0].Msg, "configuration problem")
	assert.Equal(t, 8*time.Second, loud[0].Attrs["wait"])
}

func TestLogNothingWhenCancelledDuringAttempt(t *testing.T) {
	rec := newRecorder()
	running := make(chan struct{})
	h := newHarness(t, fixedPolicy(), func(chan *call) reconnect.Attempt {
		return func(ctx context.Context, established func()) error {
			close(running)
			<-ctx.Done()
			return errors.New("read: connection closed by shutdown")
		}
	}, withLogger(slog.New(rec)))
	select {
	case <-running:
	case <-time.After(waitFor):
		t.Fatal("no attempt started")
	}
	require.NoError(t, h.stop())
	for _, l := range rec.take() {
		assert.Less(t, l.Level, slog.LevelInfo, "logged %q at %s", l.Msg, l.Level)
	}
}
