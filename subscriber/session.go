package subscriber

import (
	"context"
	"errors"

	"github.com/mcpwatch/watcher/event"
)

// Session is one established connection to an MCP server, of either
// protocol era. Implementations are safe for concurrent use; Read may be
// called from several goroutines at once.
type Session interface {
	// Protocol is the negotiated protocol version.
	Protocol() string
	// Modern reports whether the session speaks 2026-07-28 (subscriptions/listen).
	Modern() bool
	// CanSubscribe reports whether the server declared resources.subscribe.
	CanSubscribe() bool
	// Subscribe sends resources/subscribe for uri (legacy sessions only).
	Subscribe(ctx context.Context, uri string) error
	// Listen opens the subscriptions/listen stream for uris (modern sessions
	// only), waits for the server's acknowledgement and returns the URIs it
	// honoured. The stream stays open until Close or the next Listen, which
	// supersedes it; when a current stream that honoured some URI ends, the
	// session is lost (Done closes). An error wrapping ErrRejected leaves the
	// session usable: retry with fewer URIs.
	Listen(ctx context.Context, uris []string) (acked []string, err error)
	// Read calls resources/read. An error wrapping ErrNotFound means the
	// server says the resource does not exist.
	Read(ctx context.Context, uri string) ([]event.Content, error)
	// Ping checks that the server still answers.
	Ping(ctx context.Context) error
	// Done is closed when the session is lost; Err then says why.
	Done() <-chan struct{}
	Err() error
	// Close ends the session (stopping a stdio child) and returns after every
	// goroutine the session started has exited. Safe to call more than once.
	Close() error
}

// Dialer establishes a Session. notify is called with the URI of every
// notifications/resources/updated; it must not block and is called on the
// transport's reader goroutine.
type Dialer func(ctx context.Context, notify func(uri string)) (Session, error)

var (
	// ErrNotFound: the server says the resource does not exist.
	ErrNotFound = errors.New("resource not found")
	// ErrSessionLost: the session ended while a request was in flight.
	ErrSessionLost = errors.New("session lost")
	// ErrRejected: the server refused the request's parameters
	// (INVALID_PARAMS), e.g. a subscriptions/listen naming a URI it will not
	// watch; the session itself is still usable.
	ErrRejected = errors.New("the server rejected the request's parameters")
)
