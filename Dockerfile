# syntax=docker/dockerfile:1
# The watcher, plus the demo MCP server so the compose setup has something to
# watch. Build: docker build -t mcpwatch/watcher .

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/watcher ./cmd/watcher && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/demoserver ./examples/demoserver

# distroless static: no shell, no package manager, runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/watcher /out/demoserver /usr/local/bin/
WORKDIR /var/lib/watcher
# /metrics, /healthz and /readyz when http.listen is set (compose sets it).
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/watcher"]
CMD ["run", "-c", "/etc/watcher/watcher.yaml"]
