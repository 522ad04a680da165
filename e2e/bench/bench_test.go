package bench_test

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/e2e/bench"
)

func TestMain(m *testing.M) {
	bench.MaybeChild() // the watcher and baseline children re-execute this binary
	goleak.VerifyTestMain(m)
}

// TestBenchShort runs every scenario at CI size and checks only that each
// produces its figures: speed is measured, never asserted.
func TestBenchShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress strings.Builder
	rows, err := bench.Run(ctx, bench.Options{Short: true, Dir: t.TempDir(), Progress: &progress})
	var table strings.Builder
	bench.WriteTable(&table, rows)
	t.Log("\n" + table.String())
	require.NoError(t, err, progress.String())

	var names []string // "throughput stdio 1×1", …
	for _, r := range rows {
		names = append(names, strings.SplitN(r.Scenario, " ", 2)[1])
		require.False(t, math.IsNaN(r.Value) || math.IsInf(r.Value, 0), "%s %s: %v", r.Scenario, r.Figure, r.Value)
		if r.Unit != bench.UnitBytes || r.Figure != "RSS per subscription" {
			require.GreaterOrEqual(t, r.Value, 0.0, "%s %s", r.Scenario, r.Figure)
		}
		if r.BaselineName != "" {
			require.Greater(t, r.Baseline, 0.0, "%s %s: no baseline", r.Scenario, r.Figure)
		}
	}
	for _, s := range bench.Scenarios {
		prefix := strings.ReplaceAll(s, "-", " ") + " "
		require.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }),
			"no rows from scenario %s", s)
	}
	if os.Getenv("WATCHER_BENCH_SHOW") != "" {
		t.Log(progress.String())
	}
}
