package subscriber

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/reconnect"
)

// Sink receives every event a Watcher makes. The handler chain satisfies
// it. Handle is called with a context bounded by the subscription's handler
// timeout and must not block on anything slower than that; a non-nil error
// means the event was not taken, and the URI is read again later.
type Sink interface {
	Handle(ctx context.Context, ev *event.MCPResourceEvent) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, ev *event.MCPResourceEvent) error

// Handle calls f.
func (f SinkFunc) Handle(ctx context.Context, ev *event.MCPResourceEvent) error { return f(ctx, ev) }

// Options configures a Watcher.
type Options struct {
	Server config.Server
	Policy reconnect.Policy
	Sink   Sink
	// Dialer defaults to NewDialer over Server's transport.
	Dialer  Dialer
	Logger  *slog.Logger
	Metrics *Metrics // shared by all watchers; nil: unregistered
	Clock   reconnect.Clock
	Version string
	// AckTimeout bounds the wait for the subscriptions/listen
	// acknowledgement (default Server.Timeout()).
	AckTimeout time.Duration
	// ReadRetryMax caps the wait between retries of a failed read (default 30s).
	ReadRetryMax time.Duration
	// Reads, when set, is shared by every Watcher of a process and bounds
	// their reads in flight together (config max_concurrent_reads).
	Reads *ReadLimiter
}

// ReadLimiter bounds resources/read calls in flight across the Watchers
// that share it. Safe for concurrent use.
type ReadLimiter struct{ tokens chan struct{} }

// NewReadLimiter allows n reads at once.
func NewReadLimiter(n int) *ReadLimiter {
	l := &ReadLimiter{tokens: make(chan struct{}, max(n, 1))}
	for range cap(l.tokens) {
		l.tokens <- struct{}{}
	}
	return l
}

// acquireRead waits for a token to read with: the server's own one (each
// server can always have one read in flight, so a hung server that holds
// shared tokens slows the others but never stops them) or one of the shared
// pool, whichever comes first. The caller sends the token back to the
// returned channel after the read; nil means no limit applies. ok is false
// when ctx ended first.
func (w *Watcher) acquireRead(ctx context.Context) (token chan struct{}, ok bool) {
	if w.opts.Reads == nil {
		return nil, true
	}
	select {
	case <-w.solo:
		return w.solo, true
	case <-w.opts.Reads.tokens:
		return w.opts.Reads.tokens, true
	case <-ctx.Done():
		return nil, false
	}
}

// Watcher watches one MCP server's subscriptions. Create it with New, run it
// with Run; Status is safe for concurrent use.
type Watcher struct {
	opts    Options
	srv     config.Server
	log     *slog.Logger
	m       serverMetrics
	dial    Dialer
	sup     *reconnect.Supervisor
	states  []*uriState
	index   *index
	q       *queue
	idPre   string
	idSeq   atomic.Uint64
	solo    chan struct{} // the server's own read token (see acquireRead)
	retryMu sync.Mutex    // serialises retry timers against Run's exit
	closing bool

	mu       sync.Mutex // guards protocol
	protocol string
}

// New builds a Watcher; it does no I/O.
func New(opts Options) *Watcher {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.Clock == nil {
		opts.Clock = reconnect.RealClock()
	}
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = opts.Server.Timeout()
	}
	if opts.ReadRetryMax <= 0 {
		opts.ReadRetryMax = 30 * time.Second
	}
	srv := opts.Server
	w := &Watcher{opts: opts, srv: srv, log: opts.Logger.With("server", srv.Name), m: opts.Metrics.forServer(srv.Name), q: newQueue()}
	if opts.Dialer == nil {
		legacy := true
		for _, s := range srv.Subscriptions {
			if s.Method != config.MethodSubscribe {
				legacy = false
			}
		}
		opts.Dialer = NewDialer(DialOptions{Server: srv, Logger: opts.Logger, Legacy: legacy, Version: opts.Version})
	}
	w.dial = opts.Dialer
	for _, s := range srv.Subscriptions {
		w.states = append(w.states, &uriState{sub: s})
	}
	w.index = newIndex(w.states)
	w.solo = make(chan struct{}, 1)
	w.solo <- struct{}{}
	var b [8]byte
	_, _ = rand.Read(b[:])
	w.idPre = hex.EncodeToString(b[:]) + "-"
	w.sup = reconnect.NewSupervisor(reconnect.Options{Name: srv.Name, Policy: opts.Policy, Clock: opts.Clock, Logger: opts.Logger}, w.attempt)
	return w
}

// Run watches until ctx is done: it connects, subscribes, reads and
// reconnects forever. It returns nil after ctx is done, once the session,
// its stdio child and every goroutine it started have exited.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.stopRetries()
	return w.sup.Run(ctx)
}

// notify is the notification handler: it runs on the transport's reader
// goroutine and only marks the URI dirty.
func (w *Watcher) notify(uri string) {
	w.m.notifications.Inc()
	st := w.index.lookup(uri)
	if st == nil {
		w.m.ignored.Inc()
		return
	}
	if w.q.mark(st, event.ReasonUpdate) {
		w.m.coalesced.Inc()
	}
}

// attempt is one session, run by the supervisor.
func (w *Watcher) attempt(ctx context.Context, established func()) error {
	sess, err := w.dial(ctx, w.notify)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return classifyDialError(err)
	}
	defer sess.Close()
	w.mu.Lock()
	w.protocol = sess.Protocol()
	w.mu.Unlock()

	if err := w.subscribeAll(ctx, sess); err != nil {
		return err
	}
	established()
	w.m.connected.Set(1)
	defer w.m.connected.Set(0)

	// Ask for the start / reconnect reads, and requeue what was left wanting.
	for _, st := range w.states {
		w.q.mu.Lock()
		watched, first := st.watched, !st.started
		if watched && first {
			st.started = true
		}
		w.q.mu.Unlock()
		switch {
		case !watched:
		case first && st.sub.ReadOnStart:
			w.q.mark(st, event.ReasonStart)
		case !first && st.sub.ReadOnReconnect:
			w.q.mark(st, event.ReasonReconnect)
		}
	}
	w.q.requeueWanted(w.states)

	wctx, stop := context.WithCancel(ctx)
	rd := w.startReaders(wctx, ctx, sess)
	err = w.hold(ctx, sess)
	stop()
	rd.stop()
	w.unwatchAll()
	return err
}

// hold blocks until the session is lost or ctx ends, pinging if configured.
func (w *Watcher) hold(ctx context.Context, sess Session) error {
	var tick <-chan time.Time
	if w.srv.PingInterval > 0 {
		t := time.NewTicker(w.srv.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sess.Done():
			return sess.Err()
		case <-tick:
			pctx, cancel := context.WithTimeout(ctx, w.srv.Timeout())
			err := sess.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				if lost := sess.Err(); lost != nil {
					return lost // the loss the ping ran into says more (e.g. HTTP 400/404)
				}
				return fmt.Errorf("keepalive ping failed: %w", err)
			}
		}
	}
}

func (w *Watcher) unwatchAll() {
	w.q.mu.Lock()
	for _, st := range w.states {
		st.watched = false
	}
	w.q.mu.Unlock()
	w.m.subscribed.Set(0)
}

// subscribeAll subscribes every URI by its method. A URI that fails is
// reported alone; only a lost session fails the attempt.
func (w *Watcher) subscribeAll(ctx context.Context, sess Session) error {
	var listen []*uriState
	ok := 0
	for _, st := range w.states {
		method := st.sub.Method
		if method == config.MethodAuto || method == "" {
			method = config.MethodSubscribe
			if sess.Modern() {
				method = config.MethodListen
			}
		}
		var problem string
		switch {
		case method == config.MethodListen && !sess.Modern():
			problem = fmt.Sprintf("the server speaks protocol %s, which has no subscriptions/listen; use method: auto or resources/subscribe", sess.Protocol())
		case method == config.MethodSubscribe && sess.Modern():
			problem = fmt.Sprintf("the server negotiated protocol %s, which has no resources/subscribe; use method: auto or subscriptions/listen", sess.Protocol())
		case !sess.CanSubscribe():
			problem = "the server does not declare the resources.subscribe capability, so it sends no updates for this URI; nothing is read"
		case method == config.MethodListen:
			listen = append(listen, st)
			continue
		default:
			sctx, cancel := context.WithTimeout(ctx, w.srv.Timeout())
			err := sess.Subscribe(sctx, st.sub.URI)
			cancel()
			if errors.Is(err, ErrSessionLost) || (err != nil && ctx.Err() != nil) {
				return err
			}
			if err != nil {
				problem = "resources/subscribe failed: " + err.Error()
			}
		}
		if w.setWatched(st, problem) {
			ok++
		}
	}
	if len(listen) > 0 {
		problems, err := w.listenAll(ctx, sess, listen)
		if err != nil {
			return err
		}
		for _, st := range listen {
			if w.setWatched(st, problems[st]) {
				ok++
			}
		}
	}
	w.m.subscribed.Set(float64(ok))
	return nil
}

// setWatched records a URI's subscription result and logs a problem once
// per distinct text.
func (w *Watcher) setWatched(st *uriState, problem string) bool {
	w.q.mu.Lock()
	st.watched = problem == ""
	changed := problem != st.problem
	st.problem = problem
	w.q.mu.Unlock()
	if problem != "" && changed {
		w.log.Error("cannot watch resource", "uri", st.sub.URI, "err", problem)
	}
	return problem == ""
}

// classifyDialError marks errors a retry cannot fix as permanent, so the
// supervisor waits its longest interval between tries instead of hammering.
func classifyDialError(err error) error {
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) || errors.As(err, &pe) {
		return reconnect.Permanent(err)
	}
	return err
}

// newID returns a process-unique event id: a random per-watcher prefix and
// a counter, so ids never repeat across restarts (they are Nats-Msg-Ids).
func (w *Watcher) newID() string {
	var b [48]byte
	out := append(b[:0], w.idPre...)
	out = strconv.AppendUint(out, w.idSeq.Add(1), 10)
	return string(out)
}
