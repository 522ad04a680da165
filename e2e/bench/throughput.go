package bench

import (
	"fmt"
	"slices"
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
	window := size(e, 2*time.Second, 300*time.Millisecond)
	rounds := size(e, 3, 1)
	var rows []Row
	for _, c := range [][2]int{{1, 1}, {1, 100}, {10, 100}} {
		ns, nu := c[0], c[1]
		name := fmt.Sprintf("%d×%d", ns, nu)
		servers, err := startServers("t", ns, nu)
		if err != nil {
			return rows, err
		}
		conc := min(maxConcurrentReads, nu)
		bare, err := startBare(bareFor(servers, conc, window.Seconds(), 0, "", false))
		if err != nil {
			stopServers(servers)
			return rows, fmt.Errorf("baseline %s: %w", name, err)
		}
		s, err := e.startSetup("throughput-"+name, servers, nil)
		if err != nil {
			bare.Close()
			return rows, err
		}
		// A second baseline does the watcher's work without the watcher:
		// each read also encoded and published (async) to the same stream.
		barePub, err := startBare(bareFor(servers, conc, window.Seconds(), 0, s.nats.URL(), false))
		if err != nil {
			bare.Close()
			s.close()
			return rows, fmt.Errorf("baseline with publish %s: %w", name, err)
		}
		// Alternate baseline and watcher windows, so both see the same
		// machine; report the medians.
		var bRates, pRates, wRates []float64
		for i := range rounds {
			e.logf("throughput %s: round %d", name, i+1)
			var res, pres bareResult
			if err = bare.call("run", &res); err != nil {
				break
			}
			bRates = append(bRates, float64(res.Ops)/res.Seconds)
			if err = barePub.call("run", &pres); err != nil {
				break
			}
			pRates = append(pRates, float64(pres.Ops)/pres.Seconds)
			prof := ""
			if i == 0 {
				prof = "throughput-" + name
			}
			var rate float64
			if rate, err = closedLoop(e, s, window, prof); err != nil {
				break
			}
			wRates = append(wRates, rate)
		}
		if cerr := bare.Close(); err == nil {
			err = cerr
		}
		if cerr := barePub.Close(); err == nil {
			err = cerr
		}
		if cerr := s.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rows, err
		}
		rate, baseRate := median(wRates), median(bRates)
		rows = append(rows, Row{Scenario: "1 throughput " + name, Figure: fmt.Sprintf("events/s (median of %d)", rounds), Unit: UnitRate,
			Value: rate, Baseline: baseRate, BaselineName: fmt.Sprintf("bare reads, %d×%d readers", ns, conc),
			Target: "≥ 0.8× baseline", Met: rate >= 0.8*baseRate},
			Row{Scenario: "1 throughput " + name, Figure: "events/s vs a bare read + publish loop", Unit: UnitRate,
				Value: rate, Baseline: median(pRates), BaselineName: fmt.Sprintf("bare read + async publish, %d×%d", ns, conc)})
	}
	return rows, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
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
		_ = e.wait(window / 10) // the loop's last reads land
	}()
	if err := e.wait(window / 5); err != nil {
		return 0, err
	}
	var rate float64
	measure := e.profile
	if profile == "" {
		measure = func(_ *childProc, _ string, f func() error) error { return f() }
	}
	err := measure(s.w, profile, func() error {
		c0, r0, t0 := s.col.count("update"), serverReads(s.servers), time.Now()
		if err := e.wait(window); err != nil {
			return err
		}
		c1, r1, t1 := s.col.count("update"), serverReads(s.servers), time.Now()
		rate = float64(c1-c0) / t1.Sub(t0).Seconds()
		e.logf("%s: %.0f reads/s served, %.0f events/s", profile, float64(r1-r0)/t1.Sub(t0).Seconds(), rate)
		return nil
	})
	return rate, err
}

func serverReads(ss []*benchServer) int64 {
	var n int64
	for _, s := range ss {
		n += s.reads()
	}
	return n
}
