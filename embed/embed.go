// Package embed carries every file the binary needs at run time: database
// migrations, translations, the API documentation page and the web
// interface's templates and static files.
//
// Development builds and tests embed the files as they are in the tree
// (tree.go). Release builds (`make dist`, build tag "packed") embed one
// gzip-compressed archive of the same files instead (packed.go, made by
// `go run ./embed/pack`), which keeps about half a megabyte out of the
// binary; it is opened into memory at start-up. TestPackedMatchesTree
// proves the two serve the same files.
package embed

import (
	"embed"
	"io/fs"
)

// Migrations holds the goose SQL migrations, migrations/NNNNN_name.sql.
var Migrations fs.FS

// I18n holds translation tables, one JSON object per language: the API
// description's in i18n/openapi.<lang>.json, the web interface's split by
// area in i18n/ui/<area>.<lang>.json.
var I18n fs.FS

// Docs holds the Swagger UI host page served at /docs and its start
// script, docs/index.html and docs/init.js.
var Docs fs.FS

// UI holds the web interface: html/template files under ui/templates and
// the images served under /static/ from ui/static, and the style sheets
// (ui/static/css/*.css) and scripts (ui/static/js/*.js) served as one
// app.css and one app.js.
var UI fs.FS

// DocsAssets holds the Swagger UI files the /docs page loads, served under
// /docs/assets/: only those, vendored from Swagger UI 5.18.2 (licence,
// checksums and how to regenerate them in docs/swagger-ui/NOTICE). The
// bundle and the style sheet are stored gzip-compressed (name.gz), which
// keeps ~1.1 MB out of the binary; the server sends them compressed or
// decompresses them on the way out. The rest of Swagger UI's dist (source
// maps, other bundles) would be ~9.6 MB of binary never served.
//
//go:embed docs/swagger-ui/swagger-ui-bundle.js.gz docs/swagger-ui/swagger-ui.css.gz docs/swagger-ui/favicon-32x32.png
var DocsAssets embed.FS
