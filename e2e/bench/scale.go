package bench

import (
	"fmt"
	"time"
)

// scale: many idle subscriptions. Time from starting the watcher process
// to the last start event; the process's RSS and goroutines once idle; and
// bytes of RSS per subscription over a watcher of one server × one URI
// (the fixed cost, measured the same way in the same run). The watcher
// runs in its own process, so the RSS is the watcher's alone.
func scale(e *env) ([]Row, error) {
	idle := size(e, 3*time.Second, 200*time.Millisecond)

	e.logf("scale: baseline (1 server × 1 URI)")
	one, err := startServers("b", 1, 1)
	if err != nil {
		return nil, err
	}
	s, err := e.startSetup("scale-1x1", one, nil)
	if err != nil {
		return nil, err
	}
	if err := e.wait(idle); err != nil {
		s.close()
		return nil, err
	}
	base, err := s.w.stats("stats")
	if cerr := s.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}

	var rows []Row
	type config struct {
		ns, nu   int
		memLimit string // GOMEMLIMIT for the watcher process, when set
	}
	full := []config{{100, 100, ""}, {100, 100, "80MiB"}, {1, 10000, ""}}
	short := []config{{10, 10, ""}, {10, 10, "80MiB"}, {1, 100, ""}}
	for _, c := range size(e, full, short) {
		ns, nu := c.ns, c.nu
		subs := ns * nu
		name := fmt.Sprintf("4 scale %d×%d", ns, nu)
		var childEnv []string
		if c.memLimit != "" {
			name += ", GOMEMLIMIT=" + c.memLimit
			childEnv = append(childEnv, "GOMEMLIMIT="+c.memLimit)
		}
		e.logf("%s", name)
		servers, err := startServers("x", ns, nu)
		if err != nil {
			return rows, err
		}
		// The bare read rate at the same concurrency turns the start reads
		// into a baseline time.
		bare, err := runBareChildOnce(bareFor(servers, min(maxConcurrentReads, nu), size(e, 1.0, 0.2), 0, "", false))
		if err != nil {
			stopServers(servers)
			return rows, fmt.Errorf("baseline: %w", err)
		}
		bareTime := float64(subs) / (float64(bare.Ops) / bare.Seconds)

		s, err := e.startSetup(fmt.Sprintf("scale-%dx%d", ns, nu), servers, nil, childEnv...)
		if err != nil {
			return rows, err
		}
		if err := e.profile(s.w, fmt.Sprintf("scale-%dx%d%s", ns, nu, c.memLimit), func() error { return e.wait(idle) }); err != nil {
			s.close()
			return rows, err
		}
		st, err := s.w.stats("stats")
		e.logf("%s idle: %+v", name, st)
		var gc procStats
		if err == nil {
			gc, err = s.w.stats("gc-stats")
			e.logf("%s after GC: %+v", name, gc)
		}
		if cerr := s.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rows, err
		}
		perSub := float64(st.RSS-base.RSS) / float64(subs-1)
		rows = append(rows,
			Row{Scenario: name, Figure: "start → all start events", Unit: UnitDuration, Value: secs(s.started),
				Baseline: bareTime, BaselineName: "one bare read each, same concurrency", Target: "≤ 5 s", Met: s.started <= 5*time.Second},
			Row{Scenario: name, Figure: "RSS idle", Unit: UnitBytes, Value: float64(st.RSS), Baseline: float64(base.RSS),
				BaselineName: "watcher of 1×1", Target: "≤ 100 MiB", Met: st.RSS <= 100<<20},
			Row{Scenario: name, Figure: "goroutines idle", Unit: UnitCount, Value: float64(st.Goroutines), Baseline: float64(base.Goroutines), BaselineName: "watcher of 1×1"},
			Row{Scenario: name, Figure: "Go heap in use idle", Unit: UnitBytes, Value: float64(st.HeapInuse), Baseline: float64(base.HeapInuse), BaselineName: "watcher of 1×1"},
			Row{Scenario: name, Figure: "Go heap live (after a forced GC)", Unit: UnitBytes, Value: float64(gc.HeapInuse)},
			Row{Scenario: name, Figure: "goroutine stacks idle", Unit: UnitBytes, Value: float64(st.Stacks), Baseline: float64(base.Stacks), BaselineName: "watcher of 1×1"},
			Row{Scenario: name, Figure: "RSS per subscription", Unit: UnitBytes, Value: perSub},
		)
	}
	return rows, nil
}
