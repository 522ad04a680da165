package subscriber

import (
	"sync"
	"time"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
)

// uriState is one subscription's coalescing state. Fields under "guarded"
// belong to queue.mu; seq and lastSHA are touched only by the worker that
// holds the URI (reading is true), which queue.mu hands over.
type uriState struct {
	sub config.Subscription

	// guarded by queue.mu
	want    bool         // a read is wanted
	reason  event.Reason // why (the strongest reason since the last read)
	queued  bool         // in queue.ready
	reading bool         // a worker holds it
	started bool         // a start read has been asked for
	watched bool         // subscribed in the current session
	problem string       // last subscribe or read problem, for Status
	retry   *time.Timer  // pending retry after a failed read
	fails   int          // consecutive failed reads

	// owned by the worker holding the URI
	seq     uint64
	lastSHA string
}

// queue holds the URIs that want a read, in order. Per URI at most one
// read is in flight (reading) and at most one more is pending (want): a
// notification during a read sets want again, so exactly one more read
// follows however many notifications arrive. mark never blocks, so it is
// safe on the transport's reader goroutine.
type queue struct {
	mu    sync.Mutex
	ready []*uriState
	head  int
	// onReady is called, outside mu, after a URI was queued: the current
	// session's readers start a worker. nil between sessions.
	onReady func()
}

func newQueue() *queue { return &queue{} }

// setReady sets (or, with nil, clears) the callback for queued URIs.
func (q *queue) setReady(f func()) {
	q.mu.Lock()
	q.onReady = f
	q.mu.Unlock()
}

// rank orders reasons: a pending start stays a start, and a reconnect read
// stays a reconnect when an update arrives before it runs.
func rank(r event.Reason) int {
	switch r {
	case event.ReasonStart:
		return 3
	case event.ReasonReconnect:
		return 2
	case event.ReasonUpdate:
		return 1
	}
	return 0
}

// mark asks for a read of st with reason r. It reports whether the request
// was folded into one already pending (coalesced).
func (q *queue) mark(st *uriState, r event.Reason) (coalesced bool) {
	q.mu.Lock()
	coalesced = st.want
	st.want = true
	if rank(r) > rank(st.reason) {
		st.reason = r
	}
	var ready func()
	if !st.reading && !st.queued {
		q.push(st)
		ready = q.onReady
	}
	q.mu.Unlock()
	if ready != nil {
		ready()
	}
	return coalesced
}

// push appends st; q.mu must be held.
func (q *queue) push(st *uriState) {
	st.queued = true
	q.ready = append(q.ready, st)
}

// pending is how many URIs wait in the queue (take may skip some).
func (q *queue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ready) - q.head
}

// take returns the next URI to read and hands it to the caller (reading),
// or nil when nothing is ready.
func (q *queue) take() (*uriState, event.Reason) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head < len(q.ready) {
		st := q.ready[q.head]
		q.ready[q.head] = nil
		q.head++
		st.queued = false
		if !st.want || !st.watched {
			continue // unwatched URIs keep want for a later session
		}
		st.reading, st.want = true, false
		r := st.reason
		st.reason = ""
		q.compact()
		return st, r
	}
	q.compact()
	return nil, ""
}

func (q *queue) compact() {
	if q.head == len(q.ready) {
		q.ready, q.head = q.ready[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.ready) {
		n := copy(q.ready, q.ready[q.head:])
		clear(q.ready[n:])
		q.ready, q.head = q.ready[:n], 0
	}
}

// done releases st after a read. If the read failed, its reason is put
// back (want stays true) so the URI is read again; a notification that
// arrived meanwhile has already set want.
func (q *queue) done(st *uriState, failedReason event.Reason, requeue bool) {
	q.mu.Lock()
	st.reading = false
	if failedReason != "" {
		st.want = true
		if rank(failedReason) > rank(st.reason) {
			st.reason = failedReason
		}
	}
	if st.want && requeue && !st.queued {
		q.push(st)
	}
	q.mu.Unlock()
}

// requeueWanted queues every watched URI that still wants a read (after a
// new session begins).
func (q *queue) requeueWanted(states []*uriState) {
	q.mu.Lock()
	for _, st := range states {
		if st.want && st.watched && !st.reading && !st.queued {
			q.push(st)
		}
	}
	q.mu.Unlock()
}
