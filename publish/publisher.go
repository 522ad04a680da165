package publish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/event"
)

// Errors returned by Publish. Both mean the event was dropped.
var (
	// ErrBufferFull: the event's URI had nothing pending and the buffer
	// already held publish.max_pending_events events.
	ErrBufferFull = errors.New("publish: buffer full")
	// ErrClosed: Run has returned; nothing more is published.
	ErrClosed = errors.New("publish: publisher closed")
)

// Stats is a snapshot of the publisher's counters.
type Stats struct {
	Pending      int   // events held, waiting or in flight
	PendingBytes int64 // their encoded size
	InFlight     int   // JetStream publishes awaiting ack
	Delivered    uint64
	Superseded   uint64
	Dropped      uint64
	Duplicates   uint64
	Retries      uint64
}

// Publisher delivers events to NATS: the final handler of every
// subscription's chain. Publish only buffers and never blocks on NATS; Run
// owns the connection and sends. See the package doc for the guarantees.
//
// Build it with New, call Run once (it blocks until its context ends and the
// flush is over), and call Publish from any goroutine, before or during Run.
// All methods are safe for concurrent use.
type Publisher struct {
	opts    Options
	log     *slog.Logger
	m       *metrics
	defSubj Subject
	jsMode  bool

	wake    chan struct{} // wakes the send loop; capacity 1
	objWake chan struct{} // wakes the object store worker; capacity 1

	connected  atomic.Bool
	streamOK   atomic.Bool
	maxPayload atomic.Int64
	started    atomic.Bool

	nc *nats.Conn          // set by Run before the send loop starts
	js jetstream.JetStream // nil in core mode

	mu             sync.Mutex
	buf            buffer
	tmpls          map[string]Subject  // parsed SubjectFor templates
	streamSubjects []string            // the stream's subjects, once known
	reported       map[string]struct{} // subjects already reported not captured
	objq           []*slot             // slots waiting for the object store worker
	closed         bool
	st             Stats // counters only; gauges are computed in Stats()
	rep            reports
}

// New validates opts and returns a Publisher. It does no I/O.
func New(opts Options) (*Publisher, error) {
	opts.applyDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Publish.ObjectStore != "" && !opts.NATS.JetStream.Enabled {
		return nil, errors.New("publish.object_store needs nats.jetstream.enabled: true; enable JetStream or remove object_store")
	}
	def, _ := ParseSubject(opts.DefaultSubject) // validated above
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("publish: register metrics: %w", err)
	}
	p := &Publisher{
		opts:     opts,
		log:      opts.Logger,
		m:        m,
		defSubj:  def,
		jsMode:   opts.NATS.JetStream.Enabled,
		wake:     make(chan struct{}, 1),
		objWake:  make(chan struct{}, 1),
		tmpls:    map[string]Subject{},
		reported: map[string]struct{}{},
		buf: buffer{
			slots: map[key]*slot{},
			byMsg: map[*nats.Msg]*slot{},
		},
	}
	return p, nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Ready reports whether the publisher is connected to NATS and, in JetStream
// mode, has verified the stream. It does not block.
func (p *Publisher) Ready() bool {
	return p.connected.Load() && (!p.jsMode || p.streamOK.Load())
}

// Stats returns a snapshot of the counters. It does not block on NATS.
func (p *Publisher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st
	s.Pending = p.buf.events
	s.PendingBytes = p.buf.bytes
	s.InFlight = p.buf.inFlight
	return s
}

// Publish hands ev to the publisher and returns at once; it never waits for
// NATS. The event is buffered under (ev.ClientName, ev.URI): a newer event
// replaces an older one of the same URI that has not been sent yet
// (superseded). It returns an error only when the event was dropped
// (ErrBufferFull, ErrClosed), which is also counted and logged. ev must not
// be modified afterwards. ctx is unused: Publish does not block.
func (p *Publisher) Publish(_ context.Context, ev *event.MCPResourceEvent) error {
	if ev == nil {
		return errors.New("publish: nil event")
	}
	// AppendJSON is json.Marshal's output without reflection; an event
	// cannot fail to encode (every field is a string, number or time).
	data := ev.AppendJSON(make([]byte, 0, encodedSizeHint(ev)))
	e := &entry{ev: ev, data: data, born: time.Now()}
	k := key{server: ev.ClientName, uri: ev.URI}

	p.mu.Lock()
	if p.closed {
		p.st.Dropped++
		p.mu.Unlock()
		p.m.dropped.WithLabelValues(dropClosed).Inc()
		return fmt.Errorf("event %s of %s %s: %w", ev.ID, ev.ClientName, ev.URI, ErrClosed)
	}
	s := p.slotFor(k)
	// The entry a new event replaces: the one waiting behind cur, or cur
	// itself while it is not on the wire and no earlier attempt to send it
	// may have been stored (else a late copy could follow the new event).
	var target *entry
	switch {
	case s.next != nil:
		target = s.next
	case s.cur != nil && !s.unsure && (s.state == stReady || s.state == stBackoff):
		target = s.cur
	}
	if s.cur == nil && p.buf.events >= p.opts.Publish.MaxPendingEvents {
		p.st.Dropped++
		n, logNow := p.rep.dropped.note(e.born, p.opts.reportEvery)
		p.mu.Unlock()
		p.m.dropped.WithLabelValues(dropMaxEvents).Inc()
		if logNow {
			p.log.Warn("dropping events of URIs with nothing pending: the publish buffer is full; NATS may be unreachable, or raise publish.max_pending_events",
				"server", ev.ClientName, "uri", ev.URI, "dropped", n, "max_pending_events", p.opts.Publish.MaxPendingEvents)
		}
		return fmt.Errorf("event %s of %s %s: %w (%d events pending)", ev.ID, ev.ClientName, ev.URI, ErrBufferFull, p.opts.Publish.MaxPendingEvents)
	}
	var old int64
	if target != nil {
		old = int64(len(target.data))
	}
	stripped := false
	if ev.Resource != nil && p.buf.bytes-old+int64(len(e.data)) > p.opts.Publish.MaxPendingBytes {
		e = omitted(e, OmittedBufferFull, "")
		stripped = true
	}
	var supN uint64
	var supLog bool
	switch {
	case target == s.next && target != nil:
		p.buf.swap(target, e)
		s.next = e
	case target != nil:
		p.buf.swap(target, e)
		s.cur = e
	case s.cur == nil:
		s.cur = e
		p.buf.add(e)
		p.buf.enqueue(s)
	default:
		s.next = e
		p.buf.add(e)
	}
	if target != nil {
		p.st.Superseded++
		supN, supLog = p.rep.superseded.note(e.born, p.opts.reportEvery)
	}
	p.setGaugesLocked()
	p.mu.Unlock()

	if target != nil {
		p.m.superseded.Inc()
		if supLog {
			p.log.Info("newer events replaced undelivered ones of the same URI", "superseded", supN, "server", ev.ClientName, "uri", ev.URI)
		}
	}
	if stripped {
		p.m.omitted.WithLabelValues(OmittedBufferFull).Inc()
		p.log.Warn("publish buffer over publish.max_pending_bytes: keeping this event without its content",
			"server", ev.ClientName, "uri", ev.URI, "seq", ev.Seq, "content_bytes", e.ev.ContentBytes)
	}
	signal(p.wake)
	return nil
}

// slotFor returns the slot of k, creating it. p.mu must be held.
func (p *Publisher) slotFor(k key) *slot {
	if s := p.buf.slots[k]; s != nil {
		return s
	}
	s := &slot{key: k, subj: p.defSubj, heapIdx: -1}
	if p.opts.SubjectFor != nil {
		if t := p.opts.SubjectFor(k.server, k.uri); t != "" {
			sub, ok := p.tmpls[t]
			if !ok {
				var err error
				if sub, err = ParseSubject(t); err != nil {
					p.log.Error("invalid subject template for a subscription; using the default subject",
						"server", k.server, "uri", k.uri, "err", err)
					sub = p.defSubj
				}
				p.tmpls[t] = sub
			}
			s.subj = sub
		}
	}
	s.msg.Header = make(nats.Header, 5)
	p.buf.slots[k] = s
	p.buf.byMsg[&s.msg] = s
	return s
}

// subjectLocked returns the rendered subject for s and reason, cached per
// known reason. p.mu must be held.
func (p *Publisher) subjectLocked(s *slot, r event.Reason) string {
	i := reasonIndex(r)
	if i >= 0 && s.subjects[i] != "" {
		return s.subjects[i]
	}
	var b [256]byte
	subj := string(s.subj.Append(b[:0], s.key.server, r, s.key.uri))
	if i >= 0 {
		s.subjects[i] = subj
	}
	p.checkCapturedLocked(subj)
	return subj
}

// checkCapturedLocked reports, once per subject, a subject the stream does
// not capture. p.mu must be held.
func (p *Publisher) checkCapturedLocked(subj string) {
	if !p.jsMode || p.streamSubjects == nil || capturedByAny(subj, p.streamSubjects) {
		return
	}
	if _, ok := p.reported[subj]; ok {
		return
	}
	p.reported[subj] = struct{}{}
	p.m.notCaptured.Inc()
	p.log.Error(notCapturedMsg, "subject", subj, "stream", p.opts.NATS.JetStream.Stream,
		"stream_subjects", p.streamSubjects)
}

const notCapturedMsg = "no stream subject captures this subject, so its events cannot be stored and will be retried; " +
	"add a matching subject to nats.jetstream.subjects (and to the stream) or change the subject template"

func (p *Publisher) setGaugesLocked() {
	p.m.pendingEvents.Set(float64(p.buf.events))
	p.m.pendingBytes.Set(float64(p.buf.bytes))
	p.m.inFlight.Set(float64(p.buf.inFlight))
}

// encodedSizeHint guesses the encoded size, so AppendJSON grows its buffer
// at most once for plain text.
func encodedSizeHint(ev *event.MCPResourceEvent) int {
	n := 256 + len(ev.ID) + len(ev.ClientName) + 2*len(ev.URI)
	if ev.Resource != nil {
		for _, c := range ev.Resource.Contents {
			n += 32 + len(c.URI) + len(c.MIMEType) + len(c.Text) + len(c.Blob)
		}
	}
	return n + n/16
}
