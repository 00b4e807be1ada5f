package apiv1_test

// Test-only dependencies, pinned in go.mod.
import (
	_ "github.com/chromedp/chromedp"
	_ "github.com/getkin/kin-openapi/openapi3"
)
