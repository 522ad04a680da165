package publish

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Run connects to NATS and delivers buffered events until ctx ends, then
// flushes what is pending within Options.ShutdownTimeout, logs the events it
// could not deliver per (server, uri), closes the connection and returns.
// It blocks for all that time and returns only after every goroutine it
// started has exited. An unreachable NATS server is retried forever; Run
// returns an error only for a configuration it cannot use (a bad creds or
// nkey file, say) or when called twice. After Run returns, Publish drops
// events with ErrClosed.
func (p *Publisher) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("publish: Run called twice")
	}
	defer p.close()

	nopts, err := p.opts.natsOptions()
	if err != nil {
		return err
	}
	nopts = append(nopts,
		nats.ConnectHandler(p.onConnect),
		nats.ReconnectHandler(p.onConnect),
		nats.DisconnectErrHandler(p.onDisconnect),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			p.log.Warn("NATS asynchronous error", "err", err)
		}),
	)
	nc, err := nats.Connect(p.opts.url(), nopts...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s: %w; check the nats settings", redactURL(p.opts.url()), err)
	}
	defer nc.Close()
	if p.jsMode {
		js, err := jetstream.New(nc,
			jetstream.WithPublishAsyncAckHandler(p.onAck),
			jetstream.WithPublishAsyncErrHandler(p.onPubErr),
			jetstream.WithPublishAsyncMaxPending(p.opts.Publish.MaxInFlight+1),
			jetstream.WithPublishAsyncTimeout(p.opts.Publish.AckTimeout),
		)
		if err != nil {
			return fmt.Errorf("publish: JetStream context: %w", err)
		}
		p.js = js
	}
	p.nc = nc
	if !nc.IsConnected() {
		p.log.Warn("NATS is not reachable yet; buffering events and retrying", "url", redactURL(p.opts.url()))
	}

	// Work that may outlive ctx (the flush) runs under workCtx, cancelled
	// when the send loop is done.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if p.opts.Publish.ObjectStore != "" {
		wg.Go(func() { p.objectLoop(workCtx) })
	}
	p.sendLoop(ctx, workCtx)
	cancelWork()
	wg.Wait()
	p.close() // before the report, so nothing is accepted after it

	if !p.jsMode && nc.IsConnected() {
		_ = nc.FlushTimeout(time.Second)
	}
	p.reportUndelivered()
	return nil
}

// close marks the publisher closed: Publish drops from now on.
func (p *Publisher) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.connected.Store(false)
	p.m.connected.Set(0)
}

func (p *Publisher) onConnect(nc *nats.Conn) {
	p.maxPayload.Store(nc.MaxPayload())
	p.streamOK.Store(false) // re-check after every (re)connect: the server may have lost it
	p.connected.Store(true)
	p.m.connected.Set(1)
	p.log.Info("connected to NATS", "url", nc.ConnectedUrlRedacted())
	signal(p.wake)
	signal(p.objWake)
}

func (p *Publisher) onDisconnect(_ *nats.Conn, err error) {
	p.connected.Store(false)
	p.m.connected.Set(0)
	if err != nil {
		p.log.Warn("disconnected from NATS; buffering events and reconnecting", "err", err)
	}
}

// sendLoop sends until ctx ends, then until nothing is pending or the
// shutdown timeout passes.
func (p *Publisher) sendLoop(ctx, workCtx context.Context) {
	report := time.NewTicker(p.opts.reportEvery)
	defer report.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	done := ctx.Done()
	opCtx := ctx // context of stream API calls
	var deadline <-chan time.Time
	flushing := false
	var nextEnsure time.Time
	ensureFails := 0

	for {
		now := time.Now()
		if p.jsMode && p.connected.Load() && !p.streamOK.Load() && !now.Before(nextEnsure) {
			if err := p.ensureStream(opCtx); err != nil {
				ensureFails++
				wait := min(time.Duration(ensureFails)*time.Second, 30*time.Second)
				nextEnsure = time.Now().Add(wait)
				if ensureFails == 1 || ensureFails%10 == 0 {
					p.log.Error("cannot use the JetStream stream; retrying", "stream", p.opts.NATS.JetStream.Stream,
						"attempt", ensureFails, "retry_in", wait, "err", err)
				}
			} else {
				ensureFails = 0
				nextEnsure = time.Time{}
			}
		}
		if flushing && p.drained() {
			return
		}
		next := p.dispatch()
		if p.jsMode && !p.streamOK.Load() && !nextEnsure.IsZero() && (next.IsZero() || nextEnsure.Before(next)) {
			next = nextEnsure
		}
		var timerC <-chan time.Time
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0)) // Go 1.23+ timers: no stale value after Reset
			timerC = timer.C
		}
		select {
		case <-p.wake:
		case <-timerC:
		case t := <-report.C:
			p.report(t)
		case <-done:
			done = nil
			flushing = true
			stats := p.Stats()
			p.log.Info("flushing pending events", "pending", stats.Pending, "timeout", p.opts.ShutdownTimeout)
			deadline = time.After(p.opts.ShutdownTimeout)
			var cancel context.CancelFunc
			opCtx, cancel = context.WithTimeout(workCtx, p.opts.ShutdownTimeout)
			defer cancel()
		case <-deadline:
			return
		}
	}
}

// drained reports whether nothing is held.
func (p *Publisher) drained() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.events == 0
}

// dispatch sends every ready slot it may (connected, stream verified, under
// MaxInFlight) and returns when the next backoff ends (zero if none).
func (p *Publisher) dispatch() time.Time {
	var lines []eventLine
	p.mu.Lock()
	next := p.buf.promoteDue(time.Now())
	for p.buf.ready.len() > 0 && p.canSendLocked() {
		s := p.buf.ready.pop()
		msg := p.prepareLocked(s)
		if msg == nil {
			continue
		}
		// Never call into nats.go with p.mu held: its callbacks take p.mu
		// while holding nats.go's own locks.
		p.mu.Unlock()
		var err error
		if p.jsMode {
			_, err = p.js.PublishMsgAsync(msg, noRetry)
		} else {
			err = p.nc.PublishMsg(msg)
		}
		p.mu.Lock()
		switch {
		case err != nil:
			// Nothing was written. With JetStream a disconnect racing this
			// call may also have failed it through onPubErr; the state check
			// makes the second report a no-op.
			if s.state == stInFlight {
				p.failedLocked(s, err, false)
			}
		case !p.jsMode:
			if l := p.deliveredLocked(s, nil); l.enabled {
				lines = append(lines, l)
			}
		}
	}
	p.setGaugesLocked()
	if len(p.buf.retry) > 0 && (next.IsZero() || p.buf.retry[0].retryAt.Before(next)) {
		next = p.buf.retry[0].retryAt
	}
	p.mu.Unlock()
	for _, l := range lines {
		l.log(p)
	}
	return next
}

// noRetry turns off nats.go's own no-responders retry: it would republish
// the message from a timer after we may have reused it; we retry ourselves.
var noRetry = jetstream.WithRetryAttempts(0)

func (p *Publisher) canSendLocked() bool {
	if !p.connected.Load() || !p.nc.IsConnected() {
		return false
	}
	if !p.jsMode {
		return true
	}
	return p.streamOK.Load() && p.buf.inFlight < p.opts.Publish.MaxInFlight
}

// redactURL hides user info in a (comma-separated) NATS URL.
func redactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, part := range parts {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil {
			parts[i] = "(unparsable url)"
			continue
		}
		if u.User != nil {
			u.User = url.User("redacted")
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
