package publish

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpwatch/watcher/config"
)

// Options configure a Publisher. NATS and Publish come from the config file
// with its defaults applied; zero values of the bounds get the documented
// defaults.
type Options struct {
	NATS    config.NATS
	Publish config.Publish
	// DefaultSubject is the subject template (config.Config.Subject).
	DefaultSubject string
	// SubjectFor returns the per-subscription override template for
	// (server, uri), or "" for DefaultSubject. May be nil. It is called once
	// per (server, uri) with the publisher's lock held, so it must be quick
	// and must not call the Publisher.
	SubjectFor func(server, uri string) string
	// ShutdownTimeout bounds the flush of pending events when Run's context
	// ends. Default 10 s.
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
	Registerer      prometheus.Registerer // nil: metrics are kept but not registered
	// LogEvents logs one info line per delivered event.
	LogEvents bool
	// URL overrides NATS.URL (cmd passes the embedded server's ClientURL()).
	URL string

	// Test hooks.
	reconnectWait time.Duration // default 1 s (plus up to 1 s jitter)
	retryBase     time.Duration // first retry backoff, default 100 ms
	retryMax      time.Duration // retry backoff cap, default 5 s
	reportEvery   time.Duration // period of the superseded/dropped log lines, default 10 s
}

// Defaults applied by New to zero values.
const (
	DefaultMaxPendingBytes  = 64 << 20
	DefaultMaxPendingEvents = 100000
	DefaultMaxInFlight      = 1024
	DefaultAckTimeout       = 5 * time.Second
	DefaultShutdownTimeout  = 10 * time.Second
)

func (o *Options) applyDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Publish.MaxPendingBytes <= 0 {
		o.Publish.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if o.Publish.MaxPendingEvents <= 0 {
		o.Publish.MaxPendingEvents = DefaultMaxPendingEvents
	}
	if o.Publish.MaxInFlight <= 0 {
		o.Publish.MaxInFlight = DefaultMaxInFlight
	}
	if o.Publish.AckTimeout <= 0 {
		o.Publish.AckTimeout = DefaultAckTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.reconnectWait <= 0 {
		o.reconnectWait = time.Second
	}
	if o.retryBase <= 0 {
		o.retryBase = 100 * time.Millisecond
	}
	if o.retryMax <= 0 {
		o.retryMax = 5 * time.Second
	}
	if o.reportEvery <= 0 {
		o.reportEvery = 10 * time.Second
	}
}

func (o *Options) url() string {
	if o.URL != "" {
		return o.URL
	}
	return o.NATS.URL
}

func (o *Options) validate() error {
	var errs []error
	if o.url() == "" {
		errs = append(errs, errors.New("nats.url: empty; set the NATS server URL or let the watcher start its embedded server"))
	}
	if o.NATS.JetStream.Enabled {
		if o.NATS.JetStream.Stream == "" {
			errs = append(errs, errors.New("nats.jetstream.stream: empty; name the stream events are stored in"))
		}
		if len(o.NATS.JetStream.Subjects) == 0 && o.NATS.JetStream.CreateStream {
			errs = append(errs, errors.New("nats.jetstream.subjects: empty; list the subjects the stream captures"))
		}
	}
	if o.NATS.User != "" && o.NATS.Token != "" {
		errs = append(errs, errors.New("nats: set either user/password or token, not both"))
	}
	if (o.NATS.TLS.CertFile == "") != (o.NATS.TLS.KeyFile == "") {
		errs = append(errs, errors.New("nats.tls: cert_file and key_file go together; set both or neither"))
	}
	if _, err := ParseSubject(o.DefaultSubject); err != nil {
		errs = append(errs, fmt.Errorf("subject: %w", err))
	}
	return errors.Join(errs...)
}

// natsOptions builds the connection options: a daemon never gives up
// reconnecting. Secrets are passed to nats.go only, never logged.
func (o *Options) natsOptions() ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Name("mcp-watcher"),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(o.reconnectWait),
		nats.ReconnectJitter(o.reconnectWait, o.reconnectWait),
	}
	n := o.NATS
	if n.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(n.CredsFile))
	}
	if n.NKeyFile != "" {
		opt, err := nats.NkeyOptionFromSeed(n.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats.nkey_file %s: %w; point it at an nkey seed file", n.NKeyFile, err)
		}
		opts = append(opts, opt)
	}
	if n.Token != "" {
		opts = append(opts, nats.Token(n.Token))
	}
	if n.User != "" || n.Password != "" {
		opts = append(opts, nats.UserInfo(n.User, n.Password))
	}
	if n.TLS.CAFile != "" {
		opts = append(opts, nats.RootCAs(n.TLS.CAFile))
	}
	if n.TLS.CertFile != "" {
		opts = append(opts, nats.ClientCert(n.TLS.CertFile, n.TLS.KeyFile))
	}
	return opts, nil
}
