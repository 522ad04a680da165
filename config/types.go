package config

import "time"

// Config is the whole watcher configuration. Load returns it with every
// default applied, so consumers read plain values.
type Config struct {
	NATS NATS `koanf:"nats"`
	// Subject is the default subject template; variables {server}, {reason},
	// {uri_hash} (first 16 hex digits of sha256 of the URI).
	Subject   string    `koanf:"subject"`
	Publish   Publish   `koanf:"publish"`
	Reconnect Reconnect `koanf:"reconnect"` // defaults for every server
	Log       Log       `koanf:"log"`
	HTTP      HTTP      `koanf:"http"`
	// ShutdownTimeout bounds the flush of pending events and the stop of
	// children on SIGINT/SIGTERM.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	// MaxConcurrentReads bounds resources/read calls in flight across all
	// servers, so a start or reconnect of many servers at once is not a
	// burst of thousands of connections and decodes.
	MaxConcurrentReads int `koanf:"max_concurrent_reads"` // default 128
	// Servers are the enabled MCP servers by name (disabled ones and those
	// skipped under continue_on_error are not here).
	Servers map[string]Server `koanf:"servers"`
	// Skipped lists servers left out because their entry had problems and
	// continue_on_error was true. Not read from the file.
	Skipped []Skipped `koanf:"-"`
}

// Skipped is a server entry skipped under continue_on_error.
type Skipped struct {
	Name     string
	Problems []string // "key.path: message"
}

// NATS says where events go.
type NATS struct {
	// URL empty starts an embedded NATS server in-process.
	URL       string    `koanf:"url"`
	Embedded  Embedded  `koanf:"embedded"`
	JetStream JetStream `koanf:"jetstream"`
	CredsFile string    `koanf:"creds_file"`
	NKeyFile  string    `koanf:"nkey_file"`
	Token     string    `koanf:"token"`
	User      string    `koanf:"user"`
	Password  string    `koanf:"password"`
	TLS       TLS       `koanf:"tls"`
}

// Embedded configures the in-process NATS server used when NATS.URL is empty.
type Embedded struct {
	Host     string `koanf:"host"`      // default 127.0.0.1
	Port     int    `koanf:"port"`      // default 4222; -1 picks a free port
	StoreDir string `koanf:"store_dir"` // default ./data/nats
}

// JetStream configures acked publishing.
type JetStream struct {
	Enabled         bool          `koanf:"enabled"`          // default true
	Stream          string        `koanf:"stream"`           // default MCP_EVENTS
	Subjects        []string      `koanf:"subjects"`         // default ["mcp.events.>"]
	CreateStream    bool          `koanf:"create_stream"`    // default true
	DuplicateWindow time.Duration `koanf:"duplicate_window"` // default 2m
}

// TLS files for the NATS connection; all optional.
type TLS struct {
	CAFile   string `koanf:"ca_file"`
	CertFile string `koanf:"cert_file"`
	KeyFile  string `koanf:"key_file"`
}

// Publish bounds the publisher's memory and concurrency.
type Publish struct {
	MaxPendingBytes  int64         `koanf:"max_pending_bytes"`  // default 64 MiB
	MaxPendingEvents int           `koanf:"max_pending_events"` // default 100000
	MaxInFlight      int           `koanf:"max_in_flight"`      // default 1024 async publishes awaiting ack
	AckTimeout       time.Duration `koanf:"ack_timeout"`        // default 5s
	ObjectStore      string        `koanf:"object_store"`       // bucket for oversize content; empty = off
}

// Reconnect is the backoff policy between session attempts.
type Reconnect struct {
	InitialInterval time.Duration `koanf:"initial_interval"` // default 500ms
	MaxInterval     time.Duration `koanf:"max_interval"`     // default 30s
	Multiplier      float64       `koanf:"multiplier"`       // default 2
	Jitter          float64       `koanf:"jitter"`           // default 0.2 (0..1)
	// ResetAfter: a session that stayed up this long resets the backoff.
	ResetAfter time.Duration `koanf:"reset_after"` // default 1m
}

// Log configures the process logger.
type Log struct {
	Level  string `koanf:"level"`  // debug | info | warn | error; default info
	Format string `koanf:"format"` // text | json; default text
	// Events logs one line per published event (the demo turns it on).
	Events bool `koanf:"events"`
}

// HTTP serves /metrics, /healthz and /readyz when Listen is set.
type HTTP struct {
	Listen string `koanf:"listen"` // e.g. 127.0.0.1:9464; empty = off
}

// Transports.
const (
	TransportStdio          = "stdio"
	TransportSSE            = "sse"
	TransportStreamableHTTP = "streamable-http"
)

// Subscription methods.
const (
	MethodAuto      = "auto"
	MethodSubscribe = "resources/subscribe"
	MethodListen    = "subscriptions/listen"
)

// Server is one MCP server and the resources watched on it.
type Server struct {
	Name            string            `koanf:"-"`         // the map key
	Transport       string            `koanf:"transport"` // resolved: stdio | sse | streamable-http
	URL             string            `koanf:"url"`
	Headers         map[string]string `koanf:"headers"`
	Command         string            `koanf:"command"`
	Args            []string          `koanf:"args"`
	Env             map[string]string `koanf:"env"`
	Cwd             string            `koanf:"cwd"`
	Disabled        bool              `koanf:"disabled"`
	ContinueOnError bool              `koanf:"continue_on_error"`
	TimeoutSeconds  int               `koanf:"timeout_seconds"`   // default 30
	MaxContentBytes int64             `koanf:"max_content_bytes"` // default 1048576
	// PingInterval: keepalive; a failed ping counts as a lost session. 0 = off.
	PingInterval time.Duration `koanf:"ping_interval"` // default 30s
	// MaxConcurrentReads bounds resources/read calls in flight on this server.
	MaxConcurrentReads int `koanf:"max_concurrent_reads"` // default 16
	// Reconnect overrides the global policy field by field.
	Reconnect     Reconnect      `koanf:"reconnect"`
	Subscriptions []Subscription `koanf:"subscriptions"`
}

// Timeout is TimeoutSeconds as a duration.
func (s Server) Timeout() time.Duration { return time.Duration(s.TimeoutSeconds) * time.Second }

// Subscription is one watched resource URI.
type Subscription struct {
	URI                   string `koanf:"uri"`
	Method                string `koanf:"method"`                  // default auto
	ReadOnStart           bool   `koanf:"read_on_start"`           // default true
	ReadOnReconnect       bool   `koanf:"read_on_reconnect"`       // default true
	HandlerTimeoutSeconds int    `koanf:"handler_timeout_seconds"` // default 30
	Subject               string `koanf:"subject"`                 // empty = Config.Subject
	SkipUnchanged         bool   `koanf:"skip_unchanged"`          // default false
}

// HandlerTimeout is HandlerTimeoutSeconds as a duration.
func (s Subscription) HandlerTimeout() time.Duration {
	return time.Duration(s.HandlerTimeoutSeconds) * time.Second
}
