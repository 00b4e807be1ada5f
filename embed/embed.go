// Package embed carries every file the binary needs at run time: database
// migrations, translations, the API documentation page and the web
// interface's templates and static files, embedded with //go:embed as they
// are in the tree.
package embed

import "embed"

// Migrations holds the goose SQL migrations, migrations/NNNNN_name.sql,
// and PostgreSQL's own, migrations/postgres/NNNNN_name.sql.
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var Migrations embed.FS

// I18n holds translation tables, one JSON object per language: the API
// description's in i18n/openapi.<lang>.json, the web interface's split by
// area in i18n/ui/<area>.<lang>.json.
//
//go:embed i18n/*.json i18n/ui/*.json
var I18n embed.FS

// Docs holds the Swagger UI host page served at /docs and its start
// script, docs/index.html and docs/init.js.
//
//go:embed docs/index.html docs/init.js
var Docs embed.FS

// UI holds the web interface: html/template files under ui/templates and
// the images served under /static/ from ui/static, and the style sheets
// (ui/static/css/*.css) and scripts (ui/static/js/*.js) served as one
// app.css and one app.js.
//
//go:embed ui/templates/*.html ui/static/*
var UI embed.FS

// DocsAssets holds the Swagger UI files the /docs page loads, served under
// /docs/assets/: only those, vendored from Swagger UI 5.18.2 (licence,
// checksums and how to regenerate them in docs/swagger-ui/NOTICE). The
// bundle and the style sheet are stored gzip-compressed (name.gz) and sent
// compressed to browsers that accept gzip (all of them), decompressed on
// the way out for the rest. The other files of Swagger UI's dist (source
// maps, other bundles) are never served and not embedded.
//
//go:embed docs/swagger-ui/swagger-ui-bundle.js.gz docs/swagger-ui/swagger-ui.css.gz docs/swagger-ui/favicon-32x32.png
var DocsAssets embed.FS
