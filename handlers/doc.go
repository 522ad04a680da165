// Package handlers is the event pipeline between a read and NATS.
//
// A Handler is a function; Middleware wraps one (watermill style). The
// watcher builds one chain, Recover(publisher.Publish), or
// Recover(Timeout(user middleware...(publisher.Publish))) when middleware
// is added (app.Options.Middleware), and hands it to every subscriber as
// its Sink. The publisher logs delivered events itself (log.events).
//
// Timeout runs the rest of the chain on a goroutine of its own so a handler
// that ignores its context cannot hold up the caller's URI, server or
// worker; those goroutines belong to a Tracker, and the owner of the chain
// must call Tracker.Wait during shutdown.
package handlers
