package bench

import (
	"fmt"
	"sync"
	"time"
)

// sentLog records when each version of each URI was notified, and turns
// arrivals into latencies: a notification's latency is the time until the
// first event carrying its version or a newer one (coalescing folds several
// notifications into one event; each of them still waited that long).
type sentLog struct {
	mu      sync.Mutex
	pending map[string][]sent
	lat     []time.Duration
	left    int
}

type sent struct {
	ver uint64
	at  time.Time
}

func newSentLog() *sentLog { return &sentLog{pending: map[string][]sent{}} }

func (l *sentLog) add(uri string, v uint64, at time.Time) {
	l.mu.Lock()
	l.pending[uri] = append(l.pending[uri], sent{v, at})
	l.left++
	l.mu.Unlock()
}

// arrived settles every notification of a.URI up to a.Version.
func (l *sentLog) arrived(a arrival) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.pending[a.URI]
	i := 0
	for ; i < len(q) && q[i].ver <= a.Version; i++ {
		l.lat = append(l.lat, a.At.Sub(q[i].at))
	}
	l.left -= i
	l.pending[a.URI] = q[i:]
}

func (l *sentLog) remaining() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.left
}

// latency: notifications paced at a fixed rate, round robin over 100 URIs
// of one server; from the server handing notifications/resources/updated
// to its transport to the event arriving at the consumer. Baseline: one
// bare read round trip plus one bare JetStream publish round trip (sync),
// measured sequentially by the baseline child, quantile by quantile.
func latency(e *env) ([]Row, error) {
	servers, err := startServers("l", 1, 100)
	if err != nil {
		return nil, err
	}
	srv := servers[0]
	uris := srv.URIs()

	e.logf("latency: baseline")
	base, err := e.runBaseline("latency-baseline", servers, 1, size(e, 2.0, 0.3), 0, true)
	if err != nil {
		return nil, err
	}

	log := newSentLog()
	s, err := e.startSetup("latency", servers, func(a arrival) {
		if a.Reason == "update" {
			log.arrived(a)
		}
	})
	if err != nil {
		return nil, err
	}
	defer s.close()

	var rows []Row
	for _, rc := range []struct {
		rate        float64
		full, short time.Duration
	}{{100, 5 * time.Second, 300 * time.Millisecond}, {1000, 5 * time.Second, 300 * time.Millisecond}, {5000, 4 * time.Second, 300 * time.Millisecond}} {
		e.logf("latency at %.0f/s", rc.rate)
		log.mu.Lock()
		log.lat = nil
		log.mu.Unlock()
		ctx, cancel := contextWithTimeout(e, size(e, rc.full, rc.short))
		i := 0
		pace(ctx, rc.rate, func() bool {
			uri := uris[i%len(uris)]
			i++
			v := srv.Bump(uri)
			log.add(uri, v, time.Now())
			srv.Notify(e.ctx, uri)
			return true
		})
		cancel()
		if err := s.col.wait(30*time.Second, "every notification's event", func() bool { return log.remaining() == 0 }); err != nil {
			return rows, err
		}
		log.mu.Lock()
		q := quantilesOf(log.lat)
		log.mu.Unlock()
		name := fmt.Sprintf("2 latency %.0f/s", rc.rate)
		for _, f := range []struct {
			name      string
			v, rd, pb int64
		}{{"p50", q.P50, base.Read.P50, base.Publish.P50}, {"p99", q.P99, base.Read.P99, base.Publish.P99}, {"p99.9", q.P999, base.Read.P999, base.Publish.P999}} {
			r := Row{Scenario: name, Figure: f.name, Unit: UnitDuration, Value: nsecs(f.v), Baseline: nsecs(f.rd + f.pb),
				BaselineName: "bare read + publish " + f.name}
			if rc.rate == 1000 && f.name == "p99" {
				bound := 2*(f.rd+f.pb) + int64(time.Millisecond)
				r.Target = fmt.Sprintf("≤ 2×baseline + 1 ms = %s", fmtDuration(time.Duration(bound)))
				r.Met = f.v <= bound
			}
			rows = append(rows, r)
		}
	}
	return rows, s.close()
}
