package subscriber

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the subscriber's Prometheus series, shared by every Watcher
// of a process. Create them once with NewMetrics.
type Metrics struct {
	notifications *prometheus.CounterVec // by server
	ignored       *prometheus.CounterVec // notifications for URIs we do not watch
	coalesced     *prometheus.CounterVec // notifications folded into a pending read
	reads         *prometheus.CounterVec // by server, result
	readSeconds   *prometheus.HistogramVec
	events        *prometheus.CounterVec // by server, reason
	unchanged     *prometheus.CounterVec // skipped by skip_unchanged
	handlerErrors *prometheus.CounterVec
	subscribed    *prometheus.GaugeVec
	connected     *prometheus.GaugeVec
}

// NewMetrics registers the subscriber's series with reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "watcher", "subscriber"
	m := &Metrics{
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "notifications_total", Help: "notifications/resources/updated received."}, []string{"server"}),
		ignored:       prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "notifications_ignored_total", Help: "Notifications for URIs that are not watched."}, []string{"server"}),
		coalesced:     prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "notifications_coalesced_total", Help: "Notifications folded into a read already pending."}, []string{"server"}),
		reads:         prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "reads_total", Help: "resources/read calls by result (ok, not_found, error, lost)."}, []string{"server", "result"}),
		readSeconds:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "read_duration_seconds", Help: "resources/read latency.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)}, []string{"server"}),
		events:        prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_total", Help: "Events handed to the handler chain, by reason."}, []string{"server", "reason"}),
		unchanged:     prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "events_unchanged_skipped_total", Help: "Events not made because skip_unchanged saw the same content."}, []string{"server"}),
		handlerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "handler_errors_total", Help: "Events whose handler chain failed or timed out (the URI is read again later)."}, []string{"server"}),
		subscribed:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "subscribed_uris", Help: "URIs subscribed in the current session."}, []string{"server"}),
		connected:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "connected", Help: "1 while the server's session is established."}, []string{"server"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.notifications, m.ignored, m.coalesced, m.reads, m.readSeconds, m.events, m.unchanged, m.handlerErrors, m.subscribed, m.connected} {
			reg.MustRegister(c)
		}
	}
	return m
}

// serverMetrics are one server's children of Metrics, resolved once so the
// event path does no label lookups.
type serverMetrics struct {
	notifications, ignored, coalesced       prometheus.Counter
	readOK, readNotFound, readErr, readLost prometheus.Counter
	readSeconds                             prometheus.Observer
	evStart, evUpdate, evReconnect          prometheus.Counter
	unchanged, handlerErrors                prometheus.Counter
	subscribed, connected                   prometheus.Gauge
}

func (m *Metrics) forServer(name string) serverMetrics {
	return serverMetrics{
		notifications: m.notifications.WithLabelValues(name),
		ignored:       m.ignored.WithLabelValues(name),
		coalesced:     m.coalesced.WithLabelValues(name),
		readOK:        m.reads.WithLabelValues(name, "ok"),
		readNotFound:  m.reads.WithLabelValues(name, "not_found"),
		readErr:       m.reads.WithLabelValues(name, "error"),
		readLost:      m.reads.WithLabelValues(name, "lost"),
		readSeconds:   m.readSeconds.WithLabelValues(name),
		evStart:       m.events.WithLabelValues(name, "start"),
		evUpdate:      m.events.WithLabelValues(name, "update"),
		evReconnect:   m.events.WithLabelValues(name, "reconnect"),
		unchanged:     m.unchanged.WithLabelValues(name),
		handlerErrors: m.handlerErrors.WithLabelValues(name),
		subscribed:    m.subscribed.WithLabelValues(name),
		connected:     m.connected.WithLabelValues(name),
	}
}
