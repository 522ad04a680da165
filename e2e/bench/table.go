package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Unit says how a Row's numbers are printed.
type Unit string

// Units of Row values.
const (
	UnitRate     Unit = "/s"    // per second
	UnitDuration Unit = "s"     // seconds
	UnitBytes    Unit = "bytes" // bytes
	UnitCount    Unit = ""      // a plain count
)

// Row is one figure of the suite next to its baseline.
type Row struct {
	Scenario string
	Figure   string
	Unit     Unit
	Value    float64
	// Baseline is the raw figure measured in the same run; 0 when the figure
	// has none (Ratio is then not printed).
	Baseline     float64
	BaselineName string
	// Target is the target for this figure, if any, and Met whether
	// this run meets it.
	Target string
	Met    bool
}

// Ratio is Value / Baseline, or NaN without a baseline.
func (r Row) Ratio() float64 {
	if r.Baseline == 0 {
		return math.NaN()
	}
	return r.Value / r.Baseline
}

// WriteTable prints rows as a Markdown table.
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| scenario | figure | watcher | baseline | ratio | target | met |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---|---|")
	for _, r := range rows {
		base, ratio := "", ""
		if r.Baseline != 0 {
			base = format(r.Unit, r.Baseline)
			if r.BaselineName != "" {
				base += " (" + r.BaselineName + ")"
			}
			ratio = fmt.Sprintf("%.2f", r.Ratio())
		}
		met := ""
		if r.Target != "" {
			met = "yes"
			if !r.Met {
				met = "**no**"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Scenario, r.Figure, format(r.Unit, r.Value), base, ratio, r.Target, met)
	}
}

func format(u Unit, v float64) string {
	switch u {
	case UnitRate:
		return fmt.Sprintf("%.0f/s", v)
	case UnitDuration:
		return fmtDuration(time.Duration(v * float64(time.Second)))
	case UnitBytes:
		switch {
		case math.Abs(v) >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		case math.Abs(v) >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

// secs turns a duration into a Row value of UnitDuration.
func secs(d time.Duration) float64 { return d.Seconds() }

// nsecs turns nanoseconds into a Row value of UnitDuration.
func nsecs(ns int64) float64 { return float64(ns) / 1e9 }

// title joins scenario name parts.
func title(parts ...string) string { return strings.Join(parts, " ") }
