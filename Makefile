# backupd builds. Plain make: `make build`, `make dist`, `make deb`,
# `make test`, `make swagger-ui`. Binaries are static (CGO_ENABLED=0,
# pure-Go SQLite), built with -trimpath, stripped, and stamped with
# version, commit and date.

BASE_VERSION := 0.1.0
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# A tagged commit (v1.2.3) is that version; anything else is a
# development build of the next release, which sorts after the last one.
VERSION ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' || true)
ifeq ($(VERSION),)
VERSION := $(BASE_VERSION)~dev+git$(COMMIT)
endif
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)

LDFLAGS := -s -w \
	-X backupd/app/cli.Version=$(VERSION) \
	-X backupd/app/cli.Commit=$(COMMIT) \
	-X backupd/app/cli.Date=$(DATE)
# The release build is the plain one: static, -trimpath, stripped and
# stamped. .ci/size keeps each of the three binaries within 32 MiB.
GOBUILD := CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"

# nfpm builds the .deb packages; it is run from source at a pinned
# version, so no downloaded binary is trusted.
NFPM := go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.0

DIST := dist
# Go architecture → Debian architecture.
ARCHES := amd64:amd64 arm64:arm64 arm:armhf

.PHONY: build dist deb test clean swagger-ui

build:
	$(GOBUILD) -o bin/backupd .

dist:
	@mkdir -p $(DIST)
	GOOS=linux GOARCH=amd64 $(GOBUILD) -o $(DIST)/backupd-linux-amd64 .
	GOOS=linux GOARCH=arm64 $(GOBUILD) -o $(DIST)/backupd-linux-arm64 .
	GOOS=linux GOARCH=arm GOARM=7 $(GOBUILD) -o $(DIST)/backupd-linux-arm .
	@ls -l $(DIST)/backupd-linux-*

# The Debian changelog entry of this build (Debian revision 1, dated by the
# commit) and the man page, both compressed with gzip -9n as Debian wants.
CHANGELOG_DATE := $(shell date -u -R -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s))

deb: dist
	@mkdir -p $(DIST)/stage
	@printf '%s\n' \
		'backupd ($(VERSION)-1) unstable; urgency=medium' '' \
		'  * Package of backupd $(VERSION), commit $(COMMIT).' '' \
		' -- backupd maintainers <maintainers@backupd.dev>  $(CHANGELOG_DATE)' \
		| gzip -9n >$(DIST)/stage/changelog.Debian.gz
	@gzip -9n <packaging/backupd.1 >$(DIST)/stage/backupd.1.gz
	@for pair in $(ARCHES); do \
		goarch=$${pair%%:*}; debarch=$${pair##*:}; \
		cp $(DIST)/backupd-linux-$$goarch $(DIST)/stage/backupd || exit 1; \
		DEB_ARCH=$$debarch VERSION='$(VERSION)' \
			$(NFPM) package --config packaging/nfpm.yaml --packager deb --target $(DIST)/ || exit 1; \
	done
	@rm -rf $(DIST)/stage
	@ls -l $(DIST)/*.deb

test:
	go test -race ./...

# The Swagger UI files /docs serves (embed/docs/swagger-ui): fetched from
# the npm registry, the large ones stored gzip-compressed; checked against
# the checksums in embed/docs/swagger-ui/NOTICE.
SWAGGER_UI_VERSION := 5.18.2
swagger-ui:
	bash embed/docs/swagger-ui/update.sh $(SWAGGER_UI_VERSION)

clean:
	rm -rf bin $(DIST)
