package publish

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// producer publishes one event per URI each tick, as a subscriber seeing
// steady changes would, and remembers each URI's last seq.
type producer struct {
	p    *running
	uris int
	mu   sync.Mutex
	seq  []uint64
	sent uint64
	pad  string // appended to every content
}

func newProducer(p *running, uris int) *producer {
	return &producer{p: p, uris: uris, seq: make([]uint64, uris)}
}

func (pr *producer) round(t testing.TB) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for i := range pr.uris {
		pr.seq[i]++
		ev := newEvent("docs", uriN(i), pr.seq[i], fmt.Sprintf("uri %d version %d", i, pr.seq[i])+pr.pad)
		if err := pr.p.Publish(context.Background(), ev); err != nil {
			t.Errorf("publish: %v", err)
			return
		}
		pr.sent++
	}
}

// run publishes a round every tick until stop is closed.
func (pr *producer) run(t testing.TB, tick time.Duration, stop <-chan struct{}) {
	tk := time.NewTicker(tick)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
			pr.round(t)
		}
	}
}

func (pr *producer) final() (map[key]uint64, uint64) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	m := map[key]uint64{}
	for i, s := range pr.seq {
		m[key{"docs", uriN(i)}] = s
	}
	return m, pr.sent
}

// background runs the producer until the returned stop function is called.
func (pr *producer) background(t testing.TB, tick time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { pr.run(t, tick, done) })
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

func TestOutageDeliversLatestStatePerURI(t *testing.T) {
	dir := t.TempDir()
	ns := startServer(t, dir, -1, nil)
	port := ns.Addr().(*net.TCPAddr).Port
	url := ns.ClientURL()
	p := startPublisher(t, testOptions(url, nil))
	p.waitReady(t)

	pr := newProducer(p, 20)
	stop := pr.background(t, time.Millisecond)
	require.Eventually(t, func() bool { return p.Stats().Delivered >= 200 }, 10*time.Second, time.Millisecond)

	stopServer(ns)
	require.Eventually(t, func() bool { return !p.Ready() }, 10*time.Second, time.Millisecond)
	// The outage lasts a few seconds while updates keep coming.
	outage := time.NewTimer(3 * time.Second)
	<-outage.C
	during := p.Stats()
	require.LessOrEqual(t, during.Pending, 2*20, "at most two events per URI are held")

	ns = startServer(t, dir, port, nil)
	p.waitReady(t)
	require.Eventually(t, func() bool { return p.Stats().Delivered > during.Delivered+100 }, 10*time.Second, time.Millisecond)
	stop()
	p.waitDrained(t, 20*time.Second)

	final, sent := pr.final()
	s := p.Stats()
	require.Equal(t, sent, s.Delivered+s.Superseded, "every event is delivered or superseded by a newer one")
	require.Greater(t, s.Superseded, uint64(0))
	checkStream(t, readStream(t, url, "MCP_EVENTS"), final)
}

func TestConnectionKillsLoseNothing(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	p.waitReady(t)

	pr := newProducer(p, 20)
	stop := pr.background(t, 200*time.Microsecond)
	const kills = 25
	for range kills {
		before := p.Stats().Delivered
		require.Eventually(t, func() bool { return p.Stats().Delivered > before+50 }, 20*time.Second, time.Millisecond)
		connz, err := ns.Connz(&server.ConnzOptions{})
		require.NoError(t, err)
		for _, c := range connz.Conns {
			_ = ns.DisconnectClientByID(c.Cid)
		}
	}
	stop()
	p.waitDrained(t, 20*time.Second)

	final, sent := pr.final()
	s := p.Stats()
	t.Logf("sent %d, delivered %d, superseded %d, duplicates %d, retries %d", sent, s.Delivered, s.Superseded, s.Duplicates, s.Retries)
	require.Equal(t, sent, s.Delivered+s.Superseded, "every event is delivered or superseded by a newer one")
	require.Greater(t, s.Retries, uint64(0), "kills hit publishes in flight")
	msgs := readStream(t, ns.ClientURL(), "MCP_EVENTS")
	require.GreaterOrEqual(t, uint64(len(msgs)), s.Delivered-s.Duplicates)
	checkStream(t, msgs, final)
}

// Kills right after a batch is handed over, with no newer event to
// supersede what is in flight: the same events must be republished, and the
// duplicate window must absorb the copies.
func TestConnectionKillsMidBatchRepublishSameEvents(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, nil)
	p := startPublisher(t, testOptions(ns.ClientURL(), nil))
	pr := newProducer(p, 300)
	for range 20 {
		p.waitReady(t)
		pr.round(t)
		require.Eventually(t, func() bool { return p.Stats().InFlight > 0 || p.Stats().Pending == 0 },
			10*time.Second, 10*time.Microsecond)
		connz, err := ns.Connz(&server.ConnzOptions{})
		require.NoError(t, err)
		for _, c := range connz.Conns {
			_ = ns.DisconnectClientByID(c.Cid)
		}
	}
	p.waitDrained(t, 20*time.Second)
	final, sent := pr.final()
	s := p.Stats()
	t.Logf("sent %d, delivered %d, superseded %d, duplicates %d, retries %d", sent, s.Delivered, s.Superseded, s.Duplicates, s.Retries)
	require.Equal(t, sent, s.Delivered+s.Superseded)
	require.Greater(t, s.Retries, uint64(0))
	checkStream(t, readStream(t, ns.ClientURL(), "MCP_EVENTS"), final)
}
