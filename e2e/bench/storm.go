package bench

import (
	"fmt"
	"sync"
	"time"
)

// storm: one URI, N notifications as fast as the server can hand them to
// its transport (each bumps the version first). Counts the reads the server
// served and the events the consumer got, checks that never more than one
// read of the URI was in flight, and times the last notification to the
// event carrying the final version.
func storm(e *env) ([]Row, error) {
	n := size(e, 100_000, 2_000)
	servers, err := startServers("s", 1, 1)
	if err != nil {
		return nil, err
	}
	srv, r := servers[0], servers[0].res[0]

	e.logf("storm: baseline")
	base, err := e.runBaseline("storm-baseline", servers, 1, size(e, 1.0, 0.2), 0, true)
	if err != nil {
		return nil, err
	}
	r.reads.Store(0)

	var mu sync.Mutex
	var final uint64
	var finalAt time.Time
	s, err := e.startSetup("storm", servers, func(a arrival) {
		mu.Lock()
		if final != 0 && a.Version >= final && finalAt.IsZero() {
			finalAt = a.At
		}
		mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	defer s.close()

	e.logf("storm: %d notifications", n)
	reads0, ev0 := r.reads.Load(), s.col.count("update")
	r.maxIn.Store(0)
	var t0, last time.Time
	var v uint64
	err = e.profile(s.w, "storm", func() error {
		ctx, cancel := contextWithTimeout(e, 5*time.Minute)
		defer cancel()
		t0 = time.Now()
		for range n {
			v = srv.Bump(r.uri)
			if !srv.Notify(ctx, r.uri) {
				return fmt.Errorf("notification %d not taken", v)
			}
		}
		last = time.Now()
		mu.Lock()
		final = v
		mu.Unlock()
		return s.col.wait(30*time.Second, "the event with the final content", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return !finalAt.IsZero()
		})
	})
	if err != nil {
		return nil, err
	}
	// Arrivals before final was set may already carry it.
	mu.Lock()
	done := finalAt
	mu.Unlock()
	if err := e.wait(size(e, 500*time.Millisecond, 50*time.Millisecond)); err != nil { // let stray reads land
		return nil, err
	}
	reads, events := r.reads.Load()-reads0, s.col.count("update")-ev0
	dur := last.Sub(t0)
	rtt := time.Duration(base.Read.P50)
	bound := float64(dur/rtt) + 2
	delay := done.Sub(last)
	if delay < 0 {
		delay = 0
	}
	name := fmt.Sprintf("3 storm %d", n)
	return []Row{
		{Scenario: name, Figure: "notifications/s sent", Unit: UnitRate, Value: float64(n) / dur.Seconds()},
		{Scenario: name, Figure: "reads issued", Unit: UnitCount, Value: float64(reads), Baseline: bound,
			BaselineName: "storm duration / bare read RTT + 2", Target: "≤ baseline", Met: float64(reads) <= bound},
		{Scenario: name, Figure: "most reads in flight", Unit: UnitCount, Value: float64(r.maxIn.Load()), Target: "1", Met: r.maxIn.Load() == 1},
		{Scenario: name, Figure: "events published", Unit: UnitCount, Value: float64(events), Baseline: float64(reads), BaselineName: "reads issued"},
		{Scenario: name, Figure: "last notification → final content", Unit: UnitDuration, Value: secs(delay),
			Baseline: nsecs(base.Read.P50 + base.Publish.P50), BaselineName: "bare read + publish p50", Target: "≤ 50 ms", Met: delay <= 50*time.Millisecond},
	}, s.close()
}
