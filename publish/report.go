package publish

import (
	"cmp"
	"slices"
	"time"
)

// rateNote counts occurrences and says when to log them: at most once per
// period, with the count since the last line.
type rateNote struct {
	n    uint64
	last time.Time
}

// note counts one occurrence; it returns the count to log and true when a
// line is due now.
func (r *rateNote) note(now time.Time, every time.Duration) (uint64, bool) {
	r.n++
	return r.due(now, every)
}

// due returns the pending count and true when some are pending and the
// period has passed since the last line.
func (r *rateNote) due(now time.Time, every time.Duration) (uint64, bool) {
	if r.n == 0 || now.Sub(r.last) < every {
		return 0, false
	}
	n := r.n
	r.n, r.last = 0, now
	return n, true
}

// reports are the rate-limited log lines; guarded by Publisher.mu.
type reports struct {
	superseded rateNote
	dropped    rateNote
	failed     rateNote
	lastErr    error
	lastKey    key
}

// report logs what the rate limits held back. Called by the send loop on its
// ticker.
func (p *Publisher) report(now time.Time) {
	every := p.opts.reportEvery
	p.mu.Lock()
	sup, supOK := p.rep.superseded.due(now, every)
	drop, dropOK := p.rep.dropped.due(now, every)
	fail, failOK := p.rep.failed.due(now, every)
	lastErr, lastKey := p.rep.lastErr, p.rep.lastKey
	pending := p.buf.events
	p.mu.Unlock()
	if supOK {
		p.log.Info("newer events replaced undelivered ones of the same URI", "superseded", sup, "pending", pending)
	}
	if dropOK {
		p.log.Warn("dropped events of URIs with nothing pending: the publish buffer is full", "dropped", drop, "pending", pending)
	}
	if failOK {
		p.log.Warn("publish attempts failed; retrying the same events", "failures", fail,
			"server", lastKey.server, "uri", lastKey.uri, "err", lastErr, "pending", pending)
	}
}

// maxUndeliveredLines caps the per-URI lines of the shutdown report.
const maxUndeliveredLines = 100

// reportUndelivered logs, per (server, uri), the events still held when the
// flush ended.
func (p *Publisher) reportUndelivered() {
	type line struct {
		k key
		n int
	}
	var lines []line
	total := 0
	p.mu.Lock()
	for k, s := range p.buf.slots {
		if n := s.held(); n > 0 {
			lines = append(lines, line{k, n})
			total += n
		}
	}
	p.mu.Unlock()
	if total == 0 {
		p.log.Info("publisher stopped with every event delivered")
		return
	}
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(cmp.Compare(a.k.server, b.k.server), cmp.Compare(a.k.uri, b.k.uri))
	})
	for i, l := range lines {
		if i == maxUndeliveredLines {
			p.log.Warn("more URIs with undelivered events not listed", "uris", len(lines)-i)
			break
		}
		p.log.Warn("events not delivered before the shutdown timeout", "server", l.k.server, "uri", l.k.uri, "events", l.n)
	}
	p.log.Warn("publisher stopped with undelivered events; raise shutdown_timeout or check NATS",
		"events", total, "uris", len(lines), "shutdown_timeout", p.opts.ShutdownTimeout)
}
