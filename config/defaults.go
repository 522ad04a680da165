package config

import "time"

// Default values. docs/config.md lists the same values; keep them in step.
const (
	DefaultSubject         = "mcp.events.{server}.{reason}"
	DefaultShutdownTimeout = 15 * time.Second
	// DefaultMaxConcurrentReads is the process-wide bound on reads in flight.
	DefaultMaxConcurrentReads = 128
)

// topDefaults returns the defaults for every key outside servers, as a raw
// map shaped like the file.
func topDefaults() map[string]any {
	return map[string]any{
		"nats": map[string]any{
			"url": "",
			"embedded": map[string]any{
				"host":      "127.0.0.1",
				"port":      4222,
				"store_dir": "./data/nats",
			},
			"jetstream": map[string]any{
				"enabled":          true,
				"stream":           "MCP_EVENTS",
				"subjects":         []any{"mcp.events.>"},
				"create_stream":    true,
				"duplicate_window": 2 * time.Minute,
			},
		},
		"subject": DefaultSubject,
		"publish": map[string]any{
			"max_pending_bytes":  int64(64 << 20),
			"max_pending_events": 100000,
			"max_in_flight":      1024,
			"ack_timeout":        5 * time.Second,
		},
		"reconnect": map[string]any{
			"initial_interval": 500 * time.Millisecond,
			"max_interval":     30 * time.Second,
			"multiplier":       2.0,
			"jitter":           0.2,
			"reset_after":      time.Minute,
		},
		"log": map[string]any{
			"level":  "info",
			"format": "text",
		},
		"shutdown_timeout":     DefaultShutdownTimeout,
		"max_concurrent_reads": DefaultMaxConcurrentReads,
	}
}

// serverDefaults returns the defaults of one server entry; reconnect keys the
// entry leaves out inherit the global policy g.
func serverDefaults(g Reconnect) map[string]any {
	return map[string]any{
		"timeout_seconds":      30,
		"max_content_bytes":    int64(1 << 20),
		"ping_interval":        30 * time.Second,
		"max_concurrent_reads": 16,
		"reconnect": map[string]any{
			"initial_interval": g.InitialInterval,
			"max_interval":     g.MaxInterval,
			"multiplier":       g.Multiplier,
			"jitter":           g.Jitter,
			"reset_after":      g.ResetAfter,
		},
	}
}

// subscriptionDefaults returns the defaults of one subscription entry.
func subscriptionDefaults() map[string]any {
	return map[string]any{
		"method":                  MethodAuto,
		"read_on_start":           true,
		"read_on_reconnect":       true,
		"handler_timeout_seconds": 30,
	}
}

// fillDefaults copies into dst every key of defs that dst lacks (or holds
// null), recursing into maps present on both sides. A value of the wrong
// shape in dst is left for the decoder to report.
func fillDefaults(dst, defs map[string]any) {
	for k, d := range defs {
		cur, ok := dst[k]
		if !ok || cur == nil {
			dst[k] = d
			continue
		}
		dm, dIsMap := d.(map[string]any)
		cm, cIsMap := cur.(map[string]any)
		if dIsMap && cIsMap {
			fillDefaults(cm, dm)
		}
	}
}
