package publish

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/event"
)

// apiTimeout bounds one JetStream API call (stream lookup or creation).
const apiTimeout = 5 * time.Second

// ensureStream looks the stream up, creates it when missing and allowed,
// records its subjects and reports every default subject it does not
// capture. Called by the send loop only.
func (p *Publisher) ensureStream(ctx context.Context) error {
	cfg := p.opts.NATS.JetStream
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	st, err := p.js.Stream(ctx, cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if !cfg.CreateStream {
			return fmt.Errorf("stream %s does not exist; create it or set nats.jetstream.create_stream: true", cfg.Stream)
		}
		st, err = p.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        cfg.Stream,
			Description: "MCP resource events published by the watcher",
			Subjects:    cfg.Subjects,
			Storage:     jetstream.FileStorage,
			Duplicates:  cfg.DuplicateWindow,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = p.js.Stream(ctx, cfg.Stream)
		} else if err == nil {
			p.log.Info("created JetStream stream", "stream", cfg.Stream, "subjects", cfg.Subjects,
				"duplicate_window", cfg.DuplicateWindow)
		}
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	subjects := st.CachedInfo().Config.Subjects

	p.mu.Lock()
	p.streamSubjects = subjects
	for _, r := range []event.Reason{event.ReasonStart, event.ReasonUpdate, event.ReasonReconnect} {
		p.checkCapturedLocked(p.defSubj.pattern(r))
	}
	for _, s := range p.buf.slots {
		for _, subj := range s.subjects {
			if subj != "" {
				p.checkCapturedLocked(subj)
			}
		}
	}
	p.mu.Unlock()
	p.streamOK.Store(true)
	return nil
}

// prepareLocked fills s.msg for s.cur and marks s in flight; it returns nil
// when s went elsewhere (the object store). p.mu must be held.
func (p *Publisher) prepareLocked(s *slot) *nats.Msg {
	e := s.cur
	subj := p.subjectLocked(s, e.ev.Reason)
	setHeaders(s.msg.Header, e.ev)
	if limit := p.maxPayload.Load(); limit > 0 && int64(len(e.data)+headerSize(s.msg.Header)) > limit {
		if p.opts.Publish.ObjectStore != "" && e.ev.Resource != nil {
			s.state = stLarge
			p.objq = append(p.objq, s)
			signal(p.objWake)
			return nil
		}
		p.omitLocked(s, event.OmittedTooLarge, "")
		e = s.cur
		p.log.Warn("event larger than the NATS max_payload: publishing it without its content",
			"server", e.ev.ClientName, "uri", e.ev.URI, "seq", e.ev.Seq, "content_bytes", e.ev.ContentBytes, "max_payload", limit)
		setHeaders(s.msg.Header, e.ev)
	}
	s.msg.Subject = subj
	s.msg.Data = e.data
	s.state = stInFlight
	if p.jsMode {
		p.buf.inFlight++
	}
	return &s.msg
}

// omitLocked replaces s.cur by a copy without content. p.mu must be held.
func (p *Publisher) omitLocked(s *slot, reason, object string) {
	e := omitted(s.cur, reason, object)
	p.buf.swap(s.cur, e)
	s.cur = e
	label := reason
	if object != "" {
		label = "object_store"
	}
	p.m.omitted.WithLabelValues(label).Inc()
}

// onAck is nats.go's ack callback: it runs on nats.go's reply goroutine, so
// it only updates state and wakes the send loop.
func (p *Publisher) onAck(_ jetstream.JetStream, msg *nats.Msg, ack *jetstream.PubAck) {
	p.mu.Lock()
	s := p.buf.byMsg[msg]
	if s == nil || s.state != stInFlight {
		p.mu.Unlock()
		return
	}
	p.buf.inFlight--
	line := p.deliveredLocked(s, ack)
	p.mu.Unlock()
	if ack.Duplicate {
		p.m.duplicates.Inc()
	}
	line.log(p)
	signal(p.wake)
}

// onPubErr is nats.go's error callback (ack timeout, disconnect, no
// responders, stream errors). nats.go may call it with its own lock held, so
// it must not call into nats.go: it only requeues and wakes the send loop.
func (p *Publisher) onPubErr(_ jetstream.JetStream, msg *nats.Msg, err error) {
	p.mu.Lock()
	s := p.buf.byMsg[msg]
	if s == nil || s.state != stInFlight {
		p.mu.Unlock()
		return
	}
	p.failedLocked(s, err, outcomeUnknown(err))
	p.mu.Unlock()
	signal(p.wake)
}

// eventLine is the optional per-event log line, logged outside the lock.
type eventLine struct {
	ev                 *event.MCPResourceEvent
	subject            string
	streamSeq          uint64
	duplicate, enabled bool
}

func (l eventLine) log(p *Publisher) {
	if !l.enabled {
		return
	}
	args := []any{"server", l.ev.ClientName, "uri", l.ev.URI, "reason", l.ev.Reason, "seq", l.ev.Seq, "subject", l.subject}
	if p.jsMode {
		args = append(args, "stream_seq", l.streamSeq, "duplicate", l.duplicate)
	}
	if l.ev.ContentOmitted != "" {
		args = append(args, "content_omitted", l.ev.ContentOmitted)
	}
	p.log.Info("event published", args...)
}

// deliveredLocked resolves s.cur as delivered (ack is nil in core mode) and
// moves the slot on. p.mu must be held.
func (p *Publisher) deliveredLocked(s *slot, ack *jetstream.PubAck) eventLine {
	e := s.cur
	line := eventLine{ev: e.ev, subject: s.msg.Subject, enabled: p.opts.LogEvents}
	p.st.Delivered++
	if ack != nil {
		line.streamSeq, line.duplicate = ack.Sequence, ack.Duplicate
		if ack.Duplicate {
			p.st.Duplicates++
		}
	}
	p.m.delivered.Inc()
	p.m.latency.Observe(time.Since(e.born).Seconds())
	p.buf.advance(s)
	p.setGaugesLocked()
	return line
}

// failedLocked handles a failed attempt to deliver s.cur. unsure says the
// attempt may still be stored (ack timeout, disconnect); from then on s.cur
// is retried until acked and never superseded, because a newer event stored
// first could be followed by that late copy. Otherwise a newer event
// supersedes it, an oversize one loses its content, a disconnect waits for
// the connection and anything else retries the same event after a backoff.
// p.mu must be held.
func (p *Publisher) failedLocked(s *slot, err error, unsure bool) {
	if s.state == stInFlight && p.jsMode {
		p.buf.inFlight--
	}
	s.unsure = s.unsure || unsure
	p.st.Retries++
	p.m.retries.Inc()
	p.rep.failed.n++
	p.rep.lastErr, p.rep.lastKey = err, s.key
	p.log.Debug("publish failed", "server", s.key.server, "uri", s.key.uri, "attempt", s.attempt+1, "err", err)

	switch {
	case s.next != nil && !s.unsure:
		p.st.Superseded++
		p.m.superseded.Inc()
		p.buf.advance(s)
	case tooLarge(err) && s.cur.ev.Resource != nil:
		p.omitLocked(s, event.OmittedTooLarge, "")
		p.buf.enqueue(s)
	case disconnected(err):
		s.attempt++
		p.buf.enqueue(s) // the send loop waits for the connection
	default:
		s.attempt++
		p.buf.backoff(s, time.Now().Add(p.backoff(s.attempt)))
	}
	p.setGaugesLocked()
}

// outcomeUnknown reports whether an asynchronous publish failure leaves open
// that the message was stored: only a JetStream rejection or no responders
// prove it was not.
func outcomeUnknown(err error) bool {
	if tooLarge(err) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
		return false
	}
	var jerr jetstream.JetStreamError
	if errors.As(err, &jerr) && jerr.APIError() != nil {
		return false
	}
	return true
}

// backoff is the jittered exponential wait before retry number attempt.
func (p *Publisher) backoff(attempt int) time.Duration {
	d := p.opts.retryBase << min(attempt-1, 20)
	if d > p.opts.retryMax || d <= 0 {
		d = p.opts.retryMax
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func disconnected(err error) bool {
	return errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionClosed) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrReconnectBufExceeded) ||
		errors.Is(err, nats.ErrNoServers)
}

func tooLarge(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) {
		return true
	}
	var jerr jetstream.JetStreamError
	if errors.As(err, &jerr) && jerr.APIError() != nil {
		return jerr.APIError().ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
	}
	return false
}
