package publish

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/mcpwatch/watcher/config"
)

// embeddedReadyTimeout bounds how long StartEmbedded waits for the server to
// accept connections.
const embeddedReadyTimeout = 10 * time.Second

// StartEmbedded starts an in-process NATS server with JetStream enabled,
// listening on cfg.Host:cfg.Port (port -1 picks a free port) and storing
// JetStream data under cfg.StoreDir. It blocks until the server accepts
// connections or fails to within 10 s.
//
// The caller owns the server: it must call Shutdown and then
// WaitForShutdown, after the publisher using it has returned. The server's
// own log lines go to logger (notices at debug, warnings and errors as such).
// Clients connect to ns.ClientURL().
func StartEmbedded(cfg config.Embedded, logger *slog.Logger) (*server.Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StoreDir == "" {
		return nil, fmt.Errorf("embedded NATS: nats.embedded.store_dir is empty; set it to a writable directory")
	}
	opts := &server.Options{
		ServerName: "watcher-embedded",
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		NoSigs:     true,
	}
	if opts.Port == 0 {
		opts.Port = server.DEFAULT_PORT
	}
	if opts.Port > 0 {
		// nats-server only logs a busy port and then never becomes ready;
		// say so at once.
		addr := net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("embedded NATS cannot listen on %s: %w; free the port or change nats.embedded.port", addr, err)
		}
		_ = l.Close()
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS on %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	ns.SetLoggerV2(serverLogger{logger.With("component", "nats-server")}, false, false, false)
	ns.Start()
	if !ns.ReadyForConnections(embeddedReadyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("embedded NATS on %s:%d did not become ready within %s; is the port free and %s writable?",
			cfg.Host, cfg.Port, embeddedReadyTimeout, cfg.StoreDir)
	}
	logger.Info("embedded NATS server started", "url", ns.ClientURL(), "store_dir", cfg.StoreDir)
	return ns, nil
}

// serverLogger adapts slog to nats-server's Logger interface.
type serverLogger struct{ l *slog.Logger }

func (s serverLogger) Noticef(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s serverLogger) Warnf(format string, v ...any)   { s.l.Warn(fmt.Sprintf(format, v...)) }
func (s serverLogger) Fatalf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s serverLogger) Errorf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s serverLogger) Debugf(format string, v ...any)  { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s serverLogger) Tracef(format string, v ...any)  {}
