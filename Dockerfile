# The kaudit image the manifests in deploy/kubernetes name
# (registry.example.com/kaudit:latest): kaudit, statically linked, on a
# small base with /bin/sh (the shard Jobs run kaudit through a shell).
#
#   docker build -t registry.example.com/kaudit:latest --build-arg VERSION=$(git describe --tags --always) .
#   docker push registry.example.com/kaudit:latest
#
# kaudit talks SSH itself (golang.org/x/crypto/ssh): the image needs no
# OpenSSH client. It runs as an unprivileged user (65532); mount the
# inventory, known_hosts and the private key read-only (kaudit-serve.yaml).
# cmd/kaudit/deploy_test.go checks that GO_VERSION is go.mod's.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/kaudit ./cmd/kaudit

FROM alpine:3.21
RUN adduser -D -H -u 65532 -h /var/lib/kaudit kaudit && install -d -o 65532 -g 65532 -m 0700 /var/lib/kaudit
COPY --from=build /out/kaudit /usr/local/bin/kaudit
USER 65532:65532
ENV STATE_DIRECTORY=/var/lib/kaudit
EXPOSE 9874
ENTRYPOINT ["/usr/local/bin/kaudit"]
CMD ["--help"]
