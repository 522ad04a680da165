package publish

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of watcher_publish_dropped_total.
const (
	dropMaxEvents = "max_pending_events" // a new URI's event with the count bound reached
	dropClosed    = "closed"             // Publish after Run returned
)

type metrics struct {
	pendingEvents prometheus.Gauge
	pendingBytes  prometheus.Gauge
	inFlight      prometheus.Gauge
	connected     prometheus.Gauge
	delivered     prometheus.Counter
	duplicates    prometheus.Counter
	retries       prometheus.Counter
	superseded    prometheus.Counter
	dropped       *prometheus.CounterVec
	omitted       *prometheus.CounterVec
	notCaptured   prometheus.Counter
	latency       prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "watcher", "publish"
	m := &metrics{
		pendingEvents: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "pending_events",
			Help: "Events held by the publisher and not yet delivered (waiting or in flight)."}),
		pendingBytes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "pending_bytes",
			Help: "Encoded size of the events held by the publisher."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "in_flight",
			Help: "JetStream publishes sent and awaiting their ack."}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "connected",
			Help: "1 while connected to NATS, else 0."}),
		delivered: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "delivered_total",
			Help: "Events delivered: acked by JetStream (duplicates included) or written to the connection in core mode."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "duplicates_total",
			Help: "Acks flagged duplicate: a retried event JetStream had already stored."}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "retries_total",
			Help: "Failed publish attempts (ack timeout, disconnect, no responders, ...) that were or will be retried."}),
		superseded: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "superseded_total",
			Help: "Undelivered events replaced by a newer event of the same server and URI."}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "dropped_total",
			Help: "Events dropped without a newer event of their URI replacing them, by reason."}, []string{"reason"}),
		omitted: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "content_omitted_total",
			Help: "Events published without their content, by reason (buffer_full, too_large, object_store)."}, []string{"reason"}),
		notCaptured: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "subject_not_captured_total",
			Help: "Distinct subjects found not captured by the configured stream."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "latency_seconds",
			Help:    "Time from Publish to delivery (ack in JetStream mode), including time spent buffered.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 12)}),
	}
	for _, r := range []string{dropMaxEvents, dropClosed} {
		m.dropped.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.pendingEvents, m.pendingBytes, m.inFlight, m.connected, m.delivered,
		m.duplicates, m.retries, m.superseded, m.dropped, m.omitted, m.notCaptured, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
