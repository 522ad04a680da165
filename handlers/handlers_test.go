package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func ev() *event.MCPResourceEvent {
	return &event.MCPResourceEvent{ClientName: "s", URI: "u", Reason: event.ReasonUpdate, ContentSHA256: "abcdef0123456789"}
}

func TestChainOrder(t *testing.T) {
	var got []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, e *event.MCPResourceEvent) error {
				got = append(got, name)
				return next(ctx, e)
			}
		}
	}
	h := Chain(func(context.Context, *event.MCPResourceEvent) error { got = append(got, "final"); return nil }, mw("a"), mw("b"))
	require.NoError(t, h(context.Background(), ev()))
	require.Equal(t, []string{"a", "b", "final"}, got)
}

func TestRecover(t *testing.T) {
	h := Chain(func(context.Context, *event.MCPResourceEvent) error { panic("boom") }, Recover(quiet))
	err := h(context.Background(), ev())
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "boom", pe.Value)
}

func TestTimeoutReturnsWhileHandlerHangs(t *testing.T) {
	tr := NewTracker(quiet)
	release := make(chan struct{})
	h := Chain(func(ctx context.Context, e *event.MCPResourceEvent) error {
		<-release // ignores ctx on purpose
		return nil
	}, Timeout(tr, 20*time.Millisecond))
	err := h(context.Background(), ev())
	require.ErrorIs(t, err, ErrTimeout)
	require.EqualValues(t, 1, tr.Abandoned())

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	require.Error(t, tr.Wait(ctx), "the hung handler is still running")
	close(release)
	require.NoError(t, tr.Wait(context.Background()))
}

func TestTimeoutPassesResultAndDeadline(t *testing.T) {
	tr := NewTracker(quiet)
	want := errors.New("nope")
	h := Chain(func(ctx context.Context, e *event.MCPResourceEvent) error {
		_, ok := ctx.Deadline()
		require.True(t, ok)
		return want
	}, Timeout(tr, time.Minute))
	require.ErrorIs(t, h(context.Background(), ev()), want)
	require.NoError(t, tr.Wait(context.Background()))
}
