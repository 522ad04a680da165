// Package config loads, interpolates, defaults and validates the watcher's
// configuration file (YAML, JSON or TOML, chosen by the file extension).
//
// Load is the only entry point most callers need: it reads the file, expands
// ${VAR} references, applies WATCHER_* environment overrides for keys outside
// servers, fills in every default and validates the result, reporting every
// problem at once as Problems (one "key.path: message" per problem).
// docs/config.md is the user-facing reference for every key.
//
// Nothing here starts goroutines or keeps state; all functions are safe for
// concurrent use, and a *Config is read-only after Load returns it.
package config
