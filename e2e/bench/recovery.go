package bench

import (
	"fmt"
	"sync"
	"time"
)

// recovery: one server of 100 URIs goes away (listener and connections
// closed) for an outage, then comes back on the same address knowing no
// sessions. Times the server's return to the watcher's new
// subscriptions/listen (the session re-established, with the default
// reconnect policy), and that to the last reconnect event.
func recovery(e *env) ([]Row, error) {
	nu := size(e, 100, 10)
	outage := size(e, 5*time.Second, 500*time.Millisecond)
	servers, err := startServers("r", 1, nu)
	if err != nil {
		return nil, err
	}
	srv := servers[0]
	bare, err := runBareChildOnce(bareFor(servers, min(maxConcurrentReads, nu), size(e, 1.0, 0.2), 0, "", false))
	if err != nil {
		stopServers(servers)
		return nil, fmt.Errorf("baseline: %w", err)
	}
	bareTime := float64(nu) / (float64(bare.Ops) / bare.Seconds)

	s, err := e.startSetup("recovery", servers, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()

	var mu sync.Mutex
	var listenAt time.Time
	onListen := func() {
		mu.Lock()
		if listenAt.IsZero() {
			listenAt = time.Now()
		}
		mu.Unlock()
	}
	e.logf("recovery: %s outage", outage)
	srv.Stop()
	if err := e.wait(outage); err != nil {
		return nil, err
	}
	srv.onListen.Store(&onListen)
	back := time.Now()
	if err := srv.Start(); err != nil {
		return nil, err
	}
	if err := s.col.wait(outage+60*time.Second, fmt.Sprintf("%d reconnect events", nu), func() bool {
		return s.col.byReason["reconnect"] >= nu
	}); err != nil {
		return nil, err
	}
	all := s.col.lastAt()
	mu.Lock()
	session := listenAt
	mu.Unlock()
	name := fmt.Sprintf("5 recovery 1×%d, %s outage", nu, outage)
	return []Row{
		{Scenario: name, Figure: "return → session re-established", Unit: UnitDuration, Value: secs(session.Sub(back)),
			Target: "≤ 3 s", Met: session.Sub(back) <= 3*time.Second},
		{Scenario: name, Figure: "session → all reconnect events", Unit: UnitDuration, Value: secs(all.Sub(session)),
			Baseline: bareTime, BaselineName: "one bare read each, same concurrency", Target: "≤ 1 s", Met: all.Sub(session) <= time.Second},
		{Scenario: name, Figure: "return → all reconnect events", Unit: UnitDuration, Value: secs(all.Sub(back))},
	}, s.close()
}
