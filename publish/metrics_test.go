package publish

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// metricValue sums the samples of the metric name (watcher_publish_ is
// prefixed) whose labels include want, from the publisher's registry.
func metricValue(t *testing.T, p *running, name string, want ...string) float64 {
	t.Helper()
	g, ok := p.opts.Registerer.(prometheus.Gatherer)
	require.True(t, ok)
	mfs, err := g.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "watcher_publish_"+name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(want); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == want[i] && lp.GetValue() == want[i+1] {
						found = true
					}
				}
				if !found {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total
}
