// Package embed carries every file the binary needs at run time: database
// migrations, translations and the API documentation page.
package embed

import "embed"

// Migrations holds the goose SQL migrations, NNNNN_name.sql.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// I18n holds translation tables, one JSON object per language.
//
//go:embed i18n/*.json
var I18n embed.FS

// Docs holds the Swagger UI host page served at /docs.
//
//go:embed docs/*
var Docs embed.FS
