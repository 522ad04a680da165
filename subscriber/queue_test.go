package subscriber

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
)

func TestQueueCoalescesWhileReading(t *testing.T) {
	q := newQueue()
	st := &uriState{watched: true}
	require.False(t, q.mark(st, event.ReasonUpdate))
	require.True(t, q.mark(st, event.ReasonUpdate), "a second mark before the read is folded in")

	got, r := q.take()
	require.Same(t, st, got)
	require.Equal(t, event.ReasonUpdate, r)
	// 100 notifications during the read: one more read, not 100.
	for range 100 {
		q.mark(st, event.ReasonUpdate)
	}
	none, _ := q.take()
	require.Nil(t, none, "nothing else is handed out while the URI is being read")
	q.done(st, "", true)
	again, _ := q.take()
	require.Same(t, st, again)
	q.done(st, "", true)
	none, _ = q.take()
	require.Nil(t, none)
}

func TestQueueReasonRank(t *testing.T) {
	q := newQueue()
	st := &uriState{watched: true}
	q.mark(st, event.ReasonStart)
	q.mark(st, event.ReasonUpdate)
	_, r := q.take()
	require.Equal(t, event.ReasonStart, r, "a pending start stays a start")
	q.done(st, "", true)

	q.mark(st, event.ReasonUpdate)
	q.mark(st, event.ReasonReconnect)
	_, r = q.take()
	require.Equal(t, event.ReasonReconnect, r)
}

func TestQueueLostReadKeepsItsReasonForTheNextSession(t *testing.T) {
	q := newQueue()
	st := &uriState{watched: true}
	q.mark(st, event.ReasonStart)
	_, r := q.take()
	st.watched = false   // the session ends mid-read
	q.done(st, r, false) // the read failed with the session
	none, _ := q.take()
	require.Nil(t, none)
	st.watched = true // next session
	q.requeueWanted([]*uriState{st})
	got, r := q.take()
	require.Same(t, st, got)
	require.Equal(t, event.ReasonStart, r)
}
