// Package app is the watcher daemon's lifecycle: it builds every component
// from a loaded config and runs them as one group. cmd/watcher is a thin
// shell around it (flags, signals, logger); e2e tests run it in-process.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/handlers"
	"github.com/mcpwatch/watcher/publish"
	"github.com/mcpwatch/watcher/reconnect"
	"github.com/mcpwatch/watcher/subscriber"
)

// Options configure an App.
type Options struct {
	Config  *config.Config
	Logger  *slog.Logger
	Version string
	// Registry collects the metrics; nil creates one (with Go and process
	// collectors) served on http.listen.
	Registry *prometheus.Registry
	// Middleware are extra handlers run before the publisher, outermost first.
	Middleware []handlers.Middleware
	// OnNATS is called with the NATS URL in use once it is known (tests use
	// it to find an embedded server on a random port).
	OnNATS func(url string)
}

// App is one watcher process. Build it with New and run it with Run.
type App struct {
	opts     Options
	cfg      *config.Config
	log      *slog.Logger
	reg      *prometheus.Registry
	pubOpts  publish.Options
	pub      atomic.Pointer[publish.Publisher] // made by Run once the NATS URL is known
	tracker  *handlers.Tracker
	watchers []*subscriber.Watcher

	mu      sync.Mutex
	natsURL string
}

// New builds every component; it does no I/O.
func New(opts Options) (*App, error) {
	cfg := opts.Config
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
		opts.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	a := &App{opts: opts, cfg: cfg, log: opts.Logger, reg: opts.Registry, tracker: handlers.NewTracker(opts.Logger)}

	overrides := map[[2]string]string{}
	for _, srv := range cfg.Servers {
		for _, s := range srv.Subscriptions {
			if s.Subject != "" {
				overrides[[2]string{srv.Name, s.URI}] = s.Subject
			}
		}
	}
	a.pubOpts = publish.Options{
		NATS: cfg.NATS, Publish: cfg.Publish, DefaultSubject: cfg.Subject,
		SubjectFor:      func(server, uri string) string { return overrides[[2]string{server, uri}] },
		ShutdownTimeout: cfg.ShutdownTimeout, Logger: opts.Logger, Registerer: opts.Registry,
		LogEvents: cfg.Log.Events,
	}
	// Validate the publisher's options now (a bad subject template is a
	// config error); Run makes the real one with the URL in use.
	if _, err := publish.New(forValidation(a.pubOpts)); err != nil {
		return nil, err
	}

	// The built-in chain (the publisher's Publish) never blocks; only
	// handlers added to it need Timeout's goroutine per event to isolate a
	// hung one (it cost about 4 % of the CPU per event when always on).
	mws := []handlers.Middleware{handlers.Recover(opts.Logger)}
	if len(opts.Middleware) > 0 {
		mws = append(mws, handlers.Timeout(a.tracker, 0))
		mws = append(mws, opts.Middleware...)
	}
	sink := handlers.Chain(func(ctx context.Context, ev *event.MCPResourceEvent) error {
		return a.pub.Load().Publish(ctx, ev)
	}, mws...)
	metrics := subscriber.NewMetrics(opts.Registry)
	reads := subscriber.NewReadLimiter(cfg.MaxConcurrentReads)
	for _, srv := range cfg.Servers {
		a.watchers = append(a.watchers, subscriber.New(subscriber.Options{
			Server: srv, Policy: reconnect.PolicyFrom(srv.Reconnect), Sink: sink,
			Logger: opts.Logger, Metrics: metrics, Version: opts.Version, Reads: reads,
		}))
	}
	return a, nil
}

// Run runs until ctx ends, then shuts down in order: subscribers first
// (stopping stdio children), then in-flight handlers, then the publisher's
// flush (bounded by shutdown_timeout), then the embedded NATS server. It
// returns nil after a clean shutdown; it never returns because an MCP
// server or NATS is unreachable.
func (a *App) Run(ctx context.Context) (err error) {
	url := a.cfg.NATS.URL
	if url == "" {
		ns, err := publish.StartEmbedded(a.cfg.NATS.Embedded, a.log)
		if err != nil {
			return fmt.Errorf("embedded NATS: %w (set nats.embedded.port, or nats.url to use an external server)", err)
		}
		defer func() {
			ns.Shutdown()
			ns.WaitForShutdown()
		}()
		url = ns.ClientURL()
	}
	a.mu.Lock()
	a.natsURL = url
	a.mu.Unlock()
	if a.opts.OnNATS != nil {
		a.opts.OnNATS(url)
	}
	po := a.pubOpts
	po.URL = url
	pub, err := publish.New(po)
	if err != nil {
		return err
	}
	a.pub.Store(pub) // before any watcher starts, so the sink sees it

	// The publisher outlives the subscribers, so it can flush what they
	// handed over last.
	pubCtx, stopPub := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPub()
	pubDone := make(chan error, 1)
	go func() { pubDone <- pub.Run(pubCtx) }()

	g, gctx := errgroup.WithContext(ctx)
	for _, w := range a.watchers {
		g.Go(func() error { return w.Run(gctx) })
	}
	if a.cfg.HTTP.Listen != "" {
		g.Go(func() error { return a.serveHTTP(gctx) })
	}
	a.log.Info("watcher started", "servers", len(a.watchers), "nats", redact(url))
	werr := g.Wait()

	a.log.Info("shutting down: subscribers stopped; flushing events", "timeout", a.cfg.ShutdownTimeout)
	hctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	if err := a.tracker.Wait(hctx); err != nil {
		a.log.Warn("handlers still running at shutdown", "err", err)
	}
	cancel()
	stopPub()
	perr := <-pubDone
	return errors.Join(werr, perr)
}

// Ready reports whether NATS is usable and every server's session is up.
func (a *App) Ready() bool {
	if pub := a.pub.Load(); pub == nil || !pub.Ready() {
		return false
	}
	for _, w := range a.watchers {
		if !w.Ready() {
			return false
		}
	}
	return true
}

// Status returns every server's state.
func (a *App) Status() []subscriber.Status {
	out := make([]subscriber.Status, len(a.watchers))
	for i, w := range a.watchers {
		out[i] = w.Status()
	}
	return out
}

// Publisher returns the publisher once Run has made it, else nil.
func (a *App) Publisher() *publish.Publisher { return a.pub.Load() }

func (a *App) serveHTTP(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", a.readyz)
	ln, err := net.Listen("tcp", a.cfg.HTTP.Listen)
	if err != nil {
		return fmt.Errorf("http.listen %s: %w", a.cfg.HTTP.Listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	defer func() { <-stopped }() // serveHTTP returns only after the goroutine below
	defer cancel()
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	a.log.Info("serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// forValidation is o as a throwaway publisher can check it: unregistered,
// and with a stand-in URL when the embedded server's is not known yet.
func forValidation(o publish.Options) publish.Options {
	o.Registerer = nil
	if o.NATS.URL == "" {
		o.URL = "nats://127.0.0.1:4222"
	}
	return o
}
