package bench

import (
	"fmt"
	"time"
)

// cpuPerEvent: notifications paced at 1,000/s over 100 URIs of one server
// (10/s per URI, so nothing coalesces); the watcher process's user+sys CPU
// (getrusage) over the window divided by the events delivered. Baseline:
// the bare child reading at the same rate and publishing each read with
// JetStream async publish, its own CPU per read.
func cpuPerEvent(e *env) ([]Row, error) {
	const rate = 1000
	window := size(e, 5*time.Second, 500*time.Millisecond)
	servers, err := startServers("c", 1, 100)
	if err != nil {
		return nil, err
	}
	srv := servers[0]
	uris := srv.URIs()

	e.logf("cpu: baseline")
	base, err := e.runBaseline("cpu-baseline", servers, maxConcurrentReads, window.Seconds(), rate, false)
	if err != nil {
		return nil, err
	}

	log := newSentLog()
	s, err := e.startSetup("cpu", servers, func(a arrival) {
		if a.Reason == "update" {
			log.arrived(a)
		}
	})
	if err != nil {
		return nil, err
	}
	defer s.close()
	e.logf("cpu: watcher at %d/s", rate)
	var before, after procStats
	var sentN int
	ev0 := s.col.count("update")
	err = e.profile(s.w, "cpu", func() error {
		var err error
		if before, err = s.w.stats("stats"); err != nil {
			return err
		}
		ctx, cancel := contextWithTimeout(e, window)
		i := 0
		defer func() { sentN = i }()
		pace(ctx, rate, func() bool {
			uri := uris[i%len(uris)]
			i++
			log.add(uri, srv.Bump(uri), time.Now())
			srv.Notify(e.ctx, uri)
			return true
		})
		cancel()
		if err := s.col.wait(30*time.Second, "every notification's event", func() bool { return log.remaining() == 0 }); err != nil {
			return err
		}
		after, err = s.w.stats("stats")
		return err
	})
	if err != nil {
		return nil, err
	}
	events := s.col.count("update") - ev0
	perEvent := float64(after.CPU-before.CPU) / float64(events) / 1e9
	basePer := float64(base.CPU) / float64(max(base.Ops, 1)) / 1e9
	name := fmt.Sprintf("6 cpu at %d/s", rate)
	return []Row{
		{Scenario: name, Figure: "CPU per event (user+sys)", Unit: UnitDuration, Value: perEvent, Baseline: basePer, BaselineName: "bare read + async publish"},
		{Scenario: name, Figure: "events", Unit: UnitCount, Value: float64(events), Baseline: float64(base.Ops), BaselineName: "bare reads"},
		{Scenario: name, Figure: "notifications", Unit: UnitCount, Value: float64(sentN)},
	}, s.close()
}
