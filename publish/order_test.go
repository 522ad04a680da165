package publish

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// A send whose outcome is unknown (ack timeout, disconnect) may still be
// stored late, e.g. from a dead connection's socket. Superseding it would let
// that late copy land after the newer event; so it is retried until acked.
// A definite rejection may be superseded.
func TestFailedSendSupersededOnlyWhenSurelyNotStored(t *testing.T) {
	cases := map[string]struct {
		err        error
		superseded bool
	}{
		"disconnect":   {nats.ErrDisconnected, false},
		"ack timeout":  {jetstream.ErrAsyncPublishTimeout, false},
		"no responder": {jetstream.ErrNoStreamResponse, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := New(testOptions("nats://127.0.0.1:1", nil))
			require.NoError(t, err)
			ctx := context.Background()
			first, second, third := newEvent("docs", uriN(1), 1, "a"), newEvent("docs", uriN(1), 2, "b"), newEvent("docs", uriN(1), 3, "c")
			require.NoError(t, p.Publish(ctx, first))

			p.mu.Lock()
			s := p.buf.ready.pop()
			msg := p.prepareLocked(s) // as the send loop does
			p.mu.Unlock()
			require.NoError(t, p.Publish(ctx, second)) // waits behind the one in flight
			p.onPubErr(nil, msg, c.err)
			require.NoError(t, p.Publish(ctx, third))

			p.mu.Lock()
			defer p.mu.Unlock()
			if c.superseded {
				require.Equal(t, third.ID, s.cur.ev.ID)
				require.Nil(t, s.next)
				require.EqualValues(t, 2, p.st.Superseded)
				require.Equal(t, 1, p.buf.events)
			} else {
				require.Equal(t, first.ID, s.cur.ev.ID, "the unsure event is retried")
				require.Equal(t, third.ID, s.next.ev.ID)
				require.EqualValues(t, 1, p.st.Superseded)
				require.Equal(t, 2, p.buf.events)
			}
			require.Zero(t, p.buf.inFlight)
		})
	}
}
