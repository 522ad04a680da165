package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// maxFileBytes caps what one read serves; a demo has no business with more.
const maxFileBytes = 8 << 20

// catalog keeps the server's resources in step with the files of one
// directory. Safe for concurrent use.
type catalog struct {
	dir    string
	srv    *server.MCPServer
	subs   *subscriptions
	logger *slog.Logger

	mu    sync.Mutex
	known map[string]bool // file name -> registered as a resource
}

func newCatalog(dir string, srv *server.MCPServer, subs *subscriptions, logger *slog.Logger) *catalog {
	return &catalog{dir: dir, srv: srv, subs: subs, logger: logger, known: map[string]bool{}}
}

// fileURI is the resource URI of the file at the absolute path p.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// scan registers every regular file of the directory. Called once at start.
func (c *catalog) scan() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		c.logger.Error("cannot list the directory", "dir", c.dir, "err", err)
		return
	}
	var add []server.ServerResource
	c.mu.Lock()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		c.known[e.Name()] = true
		add = append(add, c.resource(e.Name()))
	}
	c.mu.Unlock()
	if len(add) > 0 {
		c.srv.AddResources(add...)
	}
}

// count returns how many files are served.
func (c *catalog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.known)
}

// changed reacts to a change of the directory entry name: it adds or removes
// the resource (which sends list_changed) and notifies the URI's subscribers.
func (c *catalog) changed(name string) {
	p := filepath.Join(c.dir, name)
	uri := fileURI(p)
	fi, err := os.Lstat(p)
	exists := err == nil && fi.Mode().IsRegular()

	c.mu.Lock()
	was := c.known[name]
	if exists {
		c.known[name] = true
	} else {
		delete(c.known, name)
	}
	c.mu.Unlock()

	switch {
	case exists && !was:
		c.logger.Info("file added", "uri", uri)
		c.srv.AddResources(c.resource(name))
		c.subs.listChanged()
	case !exists && was:
		c.logger.Info("file removed", "uri", uri)
		c.srv.DeleteResources(uri)
		c.subs.listChanged()
	case !exists:
		return // a directory, or a file that came and went
	}
	c.subs.resourceUpdated(uri)
}

// resource describes the file name and returns its read handler.
func (c *catalog) resource(name string) server.ServerResource {
	p := filepath.Join(c.dir, name)
	uri := fileURI(p)
	r := mcp.NewResource(uri, name,
		mcp.WithMIMEType(mimeType(name, nil)),
		mcp.WithResourceDescription("the file "+p),
	)
	return server.ServerResource{Resource: r, Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return readFile(p, req.Params.URI)
	}}
}

// readFile reads the file at p as the contents of uri: text for text types,
// a base64 blob otherwise.
func readFile(p, uri string) ([]mcp.ResourceContents, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", uri, server.ErrResourceNotFound)
		}
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s: the file has %d bytes, more than the demo serves (%d)", uri, fi.Size(), maxFileBytes)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	mt := mimeType(p, data)
	if isText(mt) && utf8.Valid(data) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mt, Text: string(data)}}, nil
	}
	return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: mt, Blob: base64.StdEncoding.EncodeToString(data)}}, nil
}

// extTypes covers the extensions the system MIME table often lacks or gets
// wrong for a demo (e.g. .md).
var extTypes = map[string]string{
	".md":   "text/markdown",
	".txt":  "text/plain",
	".json": "application/json",
	".yaml": "application/yaml",
	".yml":  "application/yaml",
	".toml": "application/toml",
	".csv":  "text/csv",
	".html": "text/html",
	".xml":  "application/xml",
	".go":   "text/x-go",
}

// mimeType picks the type by extension, then by sniffing data (when given),
// else application/octet-stream.
func mimeType(name string, data []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := extTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if base, _, err := mime.ParseMediaType(t); err == nil {
			return base
		}
		return t
	}
	if data != nil {
		base, _, _ := mime.ParseMediaType(http.DetectContentType(data))
		return base
	}
	return "application/octet-stream"
}

// isText reports whether contents of type mt are served as text.
func isText(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/yaml", "application/toml", "application/xml", "application/javascript":
		return true
	}
	return false
}
