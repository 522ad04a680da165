package bench

import (
	"fmt"
	"time"
)

// maxConcurrentReads is the watcher's default servers.*.max_concurrent_reads:
// the baseline reads with the same concurrency.
const maxConcurrentReads = 16

// throughput: every read makes the server notify the URI again (a closed
// loop), so the watcher reads each URI back to back; events/s reaching the
// consumer against a bare mcp-go read loop with the same concurrency
// (min(16, URIs) per server, one client per server) and no NATS.
func throughput(e *env) ([]Row, error) {
	window := size(e, 3*time.Second, 300*time.Millisecond)
	var rows []Row
	for _, c := range [][2]int{{1, 1}, {1, 100}, {10, 100}} {
		ns, nu := c[0], c[1]
		name := fmt.Sprintf("%d×%d", ns, nu)
		servers, err := startServers("t", ns, nu)
		if err != nil {
			return rows, err
		}
		conc := min(maxConcurrentReads, nu)
		e.logf("throughput %s: baseline", name)
		base, err := runBareChildOnce(bareFor(servers, conc, window.Seconds(), 0, "", false))
		if err != nil {
			stopServers(servers)
			return rows, fmt.Errorf("baseline %s: %w", name, err)
		}
		baseRate := float64(base.Ops) / base.Seconds

		e.logf("throughput %s: watcher", name)
		s, err := e.startSetup("throughput-"+name, servers, nil)
		if err != nil {
			return rows, err
		}
		rate, err := closedLoop(e, s, window, "throughput-"+name)
		if cerr := s.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, Row{Scenario: "1 throughput " + name, Figure: "events/s", Unit: UnitRate,
			Value: rate, Baseline: baseRate, BaselineName: fmt.Sprintf("bare reads, %d×%d readers", ns, conc),
			Target: "≥ 0.8× baseline", Met: rate >= 0.8*baseRate})
	}
	return rows, nil
}

// closedLoop turns on renotify, kicks every URI once, and measures the
// update events/s reaching the consumer over window (after a warm-up of a
// fifth of it).
func closedLoop(e *env, s *setup, window time.Duration, profile string) (float64, error) {
	for _, srv := range s.servers {
		srv.renotify.Store(true)
		for _, r := range srv.res {
			r.ver.Add(1)
			srv.Notify(e.ctx, r.uri)
		}
	}
	defer func() {
		for _, srv := range s.servers {
			srv.renotify.Store(false)
		}
	}()
	if err := e.wait(window / 5); err != nil {
		return 0, err
	}
	var rate float64
	err := e.profile(s.w, profile, func() error {
		c0, t0 := s.col.count("update"), time.Now()
		if err := e.wait(window); err != nil {
			return err
		}
		c1, t1 := s.col.count("update"), time.Now()
		rate = float64(c1-c0) / t1.Sub(t0).Seconds()
		return nil
	})
	return rate, err
}
