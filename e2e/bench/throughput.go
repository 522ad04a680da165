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
		b, p, w, err := alternate(e, "throughput-"+name, rounds, window, bare, barePub, s, httpLoop{e, servers})
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
		rows = append(rows, throughputRows("1 throughput "+name, fmt.Sprintf("%d×%d", ns, conc), "", b, p, w)...)
	}
	return rows, nil
}

// alternate runs rounds of: the bare read loop, the bare read + publish
// loop, and the watcher's closed loop, one window each, so that all three
// see the same machine; it returns each one's events (reads) per second.
// The first round's watcher window is profiled as name when profiles are on.
func alternate(e *env, name string, rounds int, window time.Duration, bare, barePub *childProc, s *setup, ls loopServers) (bRates, pRates, wRates []float64, err error) {
	for i := range rounds {
		e.logf("%s: round %d", name, i+1)
		var res, pres bareResult
		if err = bare.call("run", &res); err != nil {
			return
		}
		bRates = append(bRates, float64(res.Ops)/res.Seconds)
		if err = barePub.call("run", &pres); err != nil {
			return
		}
		pRates = append(pRates, float64(pres.Ops)/pres.Seconds)
		var rate float64
		if rate, err = closedLoop(e, s, ls, window, name, i == 0); err != nil {
			return
		}
		wRates = append(wRates, rate)
	}
	return
}

// throughputRows are a throughput configuration's two rows: the medians
// against the bare read loop (the target) and the bare read + publish loop.
// kind qualifies the baselines' names ("" or "stdio ").
func throughputRows(scenario, readers, kind string, bRates, pRates, wRates []float64) []Row {
	rate, baseRate := median(wRates), median(bRates)
	return []Row{{Scenario: scenario, Figure: fmt.Sprintf("events/s (median of %d)", len(wRates)), Unit: UnitRate,
		Value: rate, Baseline: baseRate, BaselineName: fmt.Sprintf("bare %sreads, %s readers", kind, readers),
		Target: "≥ 0.8× baseline", Met: rate >= 0.8*baseRate},
		{Scenario: scenario, Figure: "events/s vs a bare read + publish loop", Unit: UnitRate,
			Value: rate, Baseline: median(pRates), BaselineName: fmt.Sprintf("bare %sread + async publish, %s", kind, readers)}}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// loopServers are the servers of a closed loop, however they are driven.
type loopServers interface {
	loopOn() error  // renotify on, and one notification per URI
	loopOff() error // renotify off
	loopReads() int64
}

// httpLoop drives in-process bench servers.
type httpLoop struct {
	e       *env
	servers []*benchServer
}

func (h httpLoop) loopOn() error {
	for _, srv := range h.servers {
		srv.renotify.Store(true)
		for _, r := range srv.res {
			r.ver.Add(1)
			srv.Notify(h.e.ctx, r.uri)
		}
	}
	return nil
}

func (h httpLoop) loopOff() error {
	for _, srv := range h.servers {
		srv.renotify.Store(false)
	}
	return nil
}

func (h httpLoop) loopReads() int64 { return serverReads(h.servers) }

// closedLoop turns on renotify, kicks every URI once, and measures the
// update events/s reaching the consumer over window (after a warm-up of a
// fifth of it). With profile (and profiles on) the window is profiled as
// name.
func closedLoop(e *env, s *setup, ls loopServers, window time.Duration, name string, profile bool) (rate float64, err error) {
	if err := ls.loopOn(); err != nil {
		return 0, err
	}
	defer func() {
		if oerr := ls.loopOff(); err == nil {
			err = oerr
		}
		_ = e.wait(window / 10) // the loop's last reads land
	}()
	if err := e.wait(window / 5); err != nil {
		return 0, err
	}
	measure := e.profile
	if !profile {
		measure = func(_ *childProc, _ string, f func() error) error { return f() }
	}
	err = measure(s.w, name, func() error {
		c0, r0, t0 := s.col.count("update"), ls.loopReads(), time.Now()
		if err := e.wait(window); err != nil {
			return err
		}
		c1, t1, r1 := s.col.count("update"), time.Now(), ls.loopReads()
		rate = float64(c1-c0) / t1.Sub(t0).Seconds()
		e.logf("%s: %.0f reads/s served, %.0f events/s", name, float64(r1-r0)/t1.Sub(t0).Seconds(), rate)
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
