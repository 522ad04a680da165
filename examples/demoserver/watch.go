package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// dirWatcher reports changes to the entries of one directory.
type dirWatcher struct {
	w *fsnotify.Watcher
}

// newDirWatcher starts watching dir. The caller must call run, which closes it.
func newDirWatcher(dir string) (*dirWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	return &dirWatcher{w: w}, nil
}

// run calls changed with the base name of each entry created, written,
// removed or renamed, one at a time, until ctx ends. It blocks, and closes the
// watcher before returning.
func (d *dirWatcher) run(ctx context.Context, changed func(name string), logger *slog.Logger) error {
	defer d.w.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-d.w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			changed(filepath.Base(ev.Name))
		case err, ok := <-d.w.Errors:
			if !ok {
				return nil
			}
			logger.Warn("directory watch error", "err", err)
		}
	}
}
