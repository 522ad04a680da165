package subscriber

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpwatch/watcher/event"
)

// readers runs a session's read workers on demand: queueing a URI starts a
// worker (from the goroutine that queued it, without blocking) while fewer
// than max_concurrent_reads run, and a worker exits when the queue is
// empty. An idle server so holds no read goroutine at all: 100 idle servers
// kept 1,600 parked workers, whose stacks had grown in JSON decoding (about
// 24 MiB of the watcher's RSS in the 10,000-subscription benchmark), and a
// notification reaches its read with no dispatcher hop in between.
type readers struct {
	w            *Watcher
	wctx, runCtx context.Context
	sess         Session
	max          int
	wg           sync.WaitGroup // every worker

	mu      sync.Mutex
	running int
	stopped bool // no worker starts after stop
}

// startReaders starts workers for what is queued already and for every
// URI queued later, until stop.
func (w *Watcher) startReaders(wctx, runCtx context.Context, sess Session) *readers {
	p := &readers{w: w, wctx: wctx, runCtx: runCtx, sess: sess, max: max(min(w.srv.MaxConcurrentReads, len(w.states)), 1)}
	w.q.setReady(p.spawn)
	p.spawn()
	return p
}

// stop returns after every worker has exited; the caller ends wctx first.
func (p *readers) stop() {
	p.w.q.setReady(nil)
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.wg.Wait()
}

// spawn starts workers for the queued URIs, within max. It never blocks.
func (p *readers) spawn() {
	queued := p.w.q.pending()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.running < p.max && queued > 0 && !p.stopped && p.wctx.Err() == nil {
		p.running++
		queued--
		p.wg.Add(1)
		go p.work()
	}
}

// work is one read worker: it reads until the queue is empty or the
// session ends. Events already read are still handed to the sink under
// runCtx, so a lost session never discards a completed read.
func (p *readers) work() {
	defer p.wg.Done()
	for p.wctx.Err() == nil {
		st, r := p.w.q.take()
		if st == nil {
			break
		}
		p.w.readOne(p.wctx, p.runCtx, p.sess, st, r)
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	// A URI queued while this worker was leaving may have found every
	// worker slot taken: look again.
	p.spawn()
}

func (w *Watcher) readOne(wctx, runCtx context.Context, sess Session, st *uriState, r event.Reason) {
	slot, ok := w.acquireRead(wctx)
	if !ok {
		w.q.done(st, r, false) // the session ended; the next one reads it
		return
	}
	rctx, cancel := context.WithTimeout(wctx, w.srv.Timeout())
	t0 := time.Now()
	contents, err := sess.Read(rctx, st.sub.URI)
	cancel()
	if slot != nil {
		slot <- struct{}{} // the token goes back where it came from
	}
	w.m.readSeconds.Observe(time.Since(t0).Seconds())
	notFound := errors.Is(err, ErrNotFound)
	switch {
	case err == nil:
		w.m.readOK.Inc()
	case notFound:
		w.m.readNotFound.Inc()
	case wctx.Err() != nil || errors.Is(err, ErrSessionLost):
		// The next session reads it again; keep the reason.
		w.m.readLost.Inc()
		w.q.done(st, r, false)
		return
	default:
		w.m.readErr.Inc()
		w.log.Warn("read failed; will retry", "uri", st.sub.URI, "reason", r, "err", err)
		w.q.done(st, "", true)
		w.retryLater(st, r)
		return
	}

	ev := w.makeEvent(st, r, contents, notFound)
	if ev == nil {
		w.m.unchanged.Inc()
		w.q.done(st, "", true)
		return
	}
	hctx, cancel := context.WithTimeout(runCtx, st.sub.HandlerTimeout())
	err = w.opts.Sink.Handle(hctx, ev)
	cancel()
	if err != nil {
		w.m.handlerErrors.Inc()
		w.log.Warn("event not taken by the handler chain; will read again", "uri", st.sub.URI, "reason", r, "seq", ev.Seq, "err", err)
		w.q.done(st, "", true)
		w.retryLater(st, r)
		return
	}
	switch r {
	case event.ReasonStart:
		w.m.evStart.Inc()
	case event.ReasonReconnect:
		w.m.evReconnect.Inc()
	default:
		w.m.evUpdate.Inc()
	}
	st.lastSHA = ev.ContentSHA256
	w.q.mu.Lock()
	st.fails = 0
	w.q.mu.Unlock()
	w.q.done(st, "", true)
}

// makeEvent turns a read into an event, or returns nil when skip_unchanged
// applies. The caller holds st (reading).
func (w *Watcher) makeEvent(st *uriState, r event.Reason, contents []event.Content, notFound bool) *event.MCPResourceEvent {
	sum, n, _ := event.Digest(contents)
	if st.sub.SkipUnchanged && r != event.ReasonStart && sum == st.lastSHA {
		return nil
	}
	st.seq++
	ev := &event.MCPResourceEvent{
		ID:            w.newID(),
		ClientName:    w.srv.Name,
		URI:           st.sub.URI,
		Reason:        r,
		Time:          time.Now().UTC(),
		Seq:           st.seq,
		ContentSHA256: sum,
		ContentBytes:  n,
	}
	switch {
	case notFound:
		ev.ContentOmitted = event.OmittedNotFound
	case int64(n) > w.srv.MaxContentBytes:
		ev.ContentOmitted = event.OmittedTooLarge
	default:
		ev.Resource = &event.Resource{Contents: contents}
	}
	return ev
}

// retryLater reads st again after a growing delay (1s, 2s, ... up to
// ReadRetryMax), keeping the reason of the failed read.
func (w *Watcher) retryLater(st *uriState, r event.Reason) {
	w.retryMu.Lock()
	defer w.retryMu.Unlock()
	if w.closing {
		return
	}
	w.q.mu.Lock()
	st.fails++
	d := time.Second << min(st.fails-1, 16)
	if d > w.opts.ReadRetryMax {
		d = w.opts.ReadRetryMax
	}
	if st.retry != nil {
		st.retry.Stop()
	}
	st.retry = time.AfterFunc(d, func() { w.q.mark(st, r) })
	w.q.mu.Unlock()
}

// stopRetries stops pending retry timers; after it, none is armed again.
func (w *Watcher) stopRetries() {
	w.retryMu.Lock()
	w.closing = true
	w.retryMu.Unlock()
	w.q.mu.Lock()
	for _, st := range w.states {
		if st.retry != nil {
			st.retry.Stop()
		}
	}
	w.q.mu.Unlock()
}
