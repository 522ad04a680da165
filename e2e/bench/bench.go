package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Options configure Run.
type Options struct {
	// Short sizes every scenario for CI: tiny counts, short windows. The
	// figures then only show that the suite works.
	Short bool
	// Only runs these scenarios (see Scenarios); empty runs all.
	Only []string
	// Dir holds the NATS stores and watcher configs; empty makes (and
	// removes) a temporary directory.
	Dir string
	// ProfileDir, when set, receives CPU and allocation profiles of the
	// watcher child for the throughput, storm and cpu scenarios.
	ProfileDir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// Scenarios are the scenario names, in the order Run runs them. A row's
// Scenario starts with its number and the name, "-" written as a space.
var Scenarios = []string{"throughput", "throughput-stdio", "latency", "storm", "scale", "recovery", "cpu"}

// env is what a scenario gets.
type env struct {
	ctx  context.Context
	opts Options
	dir  string
	n    int // subdirectories made
}

// logf writes a progress line.
func (e *env) logf(format string, args ...any) {
	if e.opts.Progress != nil {
		fmt.Fprintf(e.opts.Progress, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
	}
}

// subdir returns a fresh directory under the run's directory.
func (e *env) subdir(name string) (string, error) {
	e.n++
	d := filepath.Join(e.dir, fmt.Sprintf("%02d-%s", e.n, name))
	return d, os.MkdirAll(d, 0o755)
}

// size picks the full or the short value.
func size[T any](e *env, full, short T) T {
	if e.opts.Short {
		return short
	}
	return full
}

// wait sleeps for d, or until ctx ends: the measurement windows.
func (e *env) wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}

// Run runs the suite and returns its rows. It blocks until every scenario
// has run and everything it started (servers, NATS, child processes) is
// stopped. It fails only when a scenario cannot run, never on a figure.
func Run(ctx context.Context, opts Options) ([]Row, error) {
	for _, s := range opts.Only {
		if !slices.Contains(Scenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q; choose from %v", s, Scenarios)
		}
	}
	e := &env{ctx: ctx, opts: opts, dir: opts.Dir}
	if e.dir == "" {
		d, err := os.MkdirTemp("", "watcher-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		e.dir = d
	}
	if opts.ProfileDir != "" {
		if err := os.MkdirAll(opts.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	run := map[string]func(*env) ([]Row, error){
		"throughput": throughput, "throughput-stdio": throughputStdio, "latency": latency, "storm": storm,
		"scale": scale, "recovery": recovery, "cpu": cpuPerEvent,
	}
	var rows []Row
	for _, name := range Scenarios {
		if len(opts.Only) > 0 && !slices.Contains(opts.Only, name) {
			continue
		}
		e.logf("scenario %s", name)
		r, err := run[name](e)
		rows = append(rows, r...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", name, err)
		}
	}
	return rows, nil
}

// contextWithTimeout bounds a paced phase.
func contextWithTimeout(e *env, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.ctx, d)
}

// profile runs f with the watcher child's CPU profile on, when profiles
// are asked for, and writes an allocation profile after it.
func (e *env) profile(w *childProc, name string, f func() error) error {
	if e.opts.ProfileDir == "" {
		return f()
	}
	base := filepath.Join(e.opts.ProfileDir, name)
	if err := w.call("cpuprofile "+base+".cpu.pprof", nil); err != nil {
		return err
	}
	ferr := f()
	if err := w.call("cpuprofile-stop", nil); err != nil {
		return err
	}
	if err := w.call("heapprofile "+base+".allocs.pprof", nil); err != nil {
		return err
	}
	if err := w.call("goroutines "+base+".goroutines.txt", nil); err != nil {
		return err
	}
	return ferr
}

// setup is the common start of a scenario: servers, NATS with a consumer,
// and the watcher child once every start event arrived. Its close stops
// everything in reverse.
type setup struct {
	servers []*benchServer
	nats    *natsEnv
	col     *collector
	w       *childProc
	started time.Duration // from the child's start to the last start event
	closed  bool
}

func (s *setup) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.w != nil {
		err = s.w.Close()
	}
	if s.col != nil {
		s.col.stop()
	}
	if s.nats != nil {
		s.nats.Close()
	}
	stopServers(s.servers)
	return err
}

// startSetup starts NATS, the consumer and the watcher over servers and
// waits for every start event. On error it closes what it started.
func (e *env) startSetup(name string, servers []*benchServer, hook func(a arrival), childEnv ...string) (*setup, error) {
	total := 0
	for _, srv := range servers {
		total += len(srv.res)
	}
	return e.startSetupFor(name, servers, httpEntries(servers), total, hook, childEnv...)
}

// startSetupFor is startSetup with the watcher's servers config entries
// given, and total subscriptions in them; servers (which may be empty) are
// only stopped by close.
func (e *env) startSetupFor(name string, servers []*benchServer, entries map[string]any, total int, hook func(a arrival), childEnv ...string) (_ *setup, err error) {
	s := &setup{servers: servers}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	dir, err := e.subdir(name)
	if err != nil {
		return nil, err
	}
	if s.nats, err = startNATS(filepath.Join(dir, "nats")); err != nil {
		return nil, err
	}
	if s.col, err = s.nats.consume(hook); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if s.w, err = startWatcher(dir, s.nats.URL(), entries, childEnv...); err != nil {
		return nil, err
	}
	if err := s.col.wait(120*time.Second, fmt.Sprintf("%d start events", total), func() bool {
		return s.col.byReason["start"] >= total
	}); err != nil {
		return nil, err
	}
	s.started = s.col.lastAt().Sub(t0)
	return s, nil
}
