package publish

import (
	"container/heap"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mcpwatch/watcher/event"
)

// OmittedBufferFull is event.OmittedBufferFull, kept for callers of this package.
const OmittedBufferFull = event.OmittedBufferFull

// key identifies the events that supersede each other.
type key struct{ server, uri string }

// entry is one accepted event and its encoded form. Entries are immutable:
// stripping content makes a new entry.
type entry struct {
	ev   *event.MCPResourceEvent
	data []byte
	born time.Time // when Publish accepted it (for the latency histogram)
}

// slotState says who owns a slot's current entry.
type slotState uint8

const (
	stIdle     slotState = iota // no current entry
	stReady                     // current waits in the ready queue
	stInFlight                  // current was handed to NATS; awaiting ack (or core publish under way)
	stBackoff                   // current failed and waits in the retry heap
	stLarge                     // current is with the object store worker
)

// slot holds the undelivered events of one (server, uri): cur is being
// delivered (or about to be), next is the newest event waiting behind it.
// Per-URI order follows from next only ever becoming cur after cur is
// resolved. All fields are guarded by Publisher.mu, except msg, which the
// sender and nats.go own while state is stInFlight.
type slot struct {
	key      key
	subj     Subject
	subjects [3]string // rendered subject per known reason, filled lazily
	cur      *entry
	next     *entry
	state    slotState
	attempt  int  // consecutive failures of cur, for backoff
	unsure   bool // an attempt to send cur may have been stored: cur cannot be superseded
	retryAt  time.Time
	heapIdx  int
	msg      nats.Msg // reused for every send of this slot
}

func (s *slot) held() int {
	n := 0
	if s.cur != nil {
		n++
	}
	if s.next != nil {
		n++
	}
	return n
}

func reasonIndex(r event.Reason) int {
	switch r {
	case event.ReasonStart:
		return 0
	case event.ReasonUpdate:
		return 1
	case event.ReasonReconnect:
		return 2
	}
	return -1
}

// fifo is the queue of slots whose current entry is ready to send. A slot is
// in it at most once (state stReady).
type fifo struct {
	items []*slot
	head  int
}

func (q *fifo) push(s *slot) { q.items = append(q.items, s) }
func (q *fifo) len() int     { return len(q.items) - q.head }
func (q *fifo) pop() *slot {
	s := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return s
}

// retryHeap orders slots in backoff by retryAt.
type retryHeap []*slot

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].retryAt.Before(h[j].retryAt) }
func (h retryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *retryHeap) Push(x any) {
	s := x.(*slot)
	s.heapIdx = len(*h)
	*h = append(*h, s)
}
func (h *retryHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.heapIdx = -1
	return s
}

// buffer is the publisher's bounded store of undelivered events. Every
// method must be called with Publisher.mu held.
type buffer struct {
	slots    map[key]*slot
	byMsg    map[*nats.Msg]*slot
	ready    fifo
	retry    retryHeap
	events   int   // entries held (cur + next over all slots)
	bytes    int64 // encoded size of the entries held
	inFlight int   // slots in stInFlight (JetStream mode)
}

func (b *buffer) add(e *entry)    { b.events++; b.bytes += int64(len(e.data)) }
func (b *buffer) remove(e *entry) { b.events--; b.bytes -= int64(len(e.data)) }

// swap replaces old by e in the accounting (same event count).
func (b *buffer) swap(old, e *entry) { b.bytes += int64(len(e.data)) - int64(len(old.data)) }

func (b *buffer) enqueue(s *slot) {
	s.state = stReady
	b.ready.push(s)
}

func (b *buffer) backoff(s *slot, at time.Time) {
	s.state = stBackoff
	s.retryAt = at
	heap.Push(&b.retry, s)
}

// promoteDue moves the slots whose backoff has elapsed to the ready queue and
// returns when the next one is due (zero if none).
func (b *buffer) promoteDue(now time.Time) time.Time {
	for len(b.retry) > 0 {
		s := b.retry[0]
		if s.retryAt.After(now) {
			return s.retryAt
		}
		heap.Pop(&b.retry)
		b.enqueue(s)
	}
	return time.Time{}
}

// advance resolves s.cur (delivered or superseded) and moves next up.
func (b *buffer) advance(s *slot) {
	b.remove(s.cur)
	s.cur, s.attempt, s.unsure = nil, 0, false
	if s.next != nil {
		s.cur, s.next = s.next, nil
		b.enqueue(s)
		return
	}
	s.state = stIdle
	// nats.go is done with the message (acked, failed or never sent): do
	// not keep the last encoded event alive in every idle slot.
	s.msg.Data = nil
}

// omitted returns a copy of e without content, marked with reason, keeping
// content_sha256 and content_bytes (computed when the producer left them
// unset) so consumers still learn that and how the content changed.
func omitted(e *entry, reason, object string) *entry {
	ev := *e.ev
	if ev.Resource != nil && (ev.ContentBytes == 0 || ev.ContentSHA256 == "") {
		sum, n, _ := event.Digest(ev.Resource.Contents)
		if ev.ContentSHA256 == "" {
			ev.ContentSHA256 = sum
		}
		ev.ContentBytes = n
	}
	ev.Resource = nil
	ev.ContentOmitted = reason
	ev.ContentObject = object
	return &entry{ev: &ev, data: ev.AppendJSON(nil), born: e.born}
}

// headerSize is the encoded size of h as nats.go writes it.
func headerSize(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// setHeaders fills h with the event headers of issue 2 §7, reusing the value
// slices already in h, so a slot's second and later events allocate nothing.
func setHeaders(h nats.Header, ev *event.MCPResourceEvent) {
	setHeader(h, event.HeaderMsgID, ev.ID)
	setHeader(h, event.HeaderServer, ev.ClientName)
	setHeader(h, event.HeaderURI, ev.URI)
	setHeader(h, event.HeaderReason, string(ev.Reason))
	setHeader(h, event.HeaderContentType, "application/json")
}

func setHeader(h nats.Header, k, v string) {
	if vs := h[k]; len(vs) == 1 {
		vs[0] = v
		return
	}
	h[k] = []string{v}
}
