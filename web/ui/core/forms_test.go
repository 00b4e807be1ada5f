package core

import "testing"

func TestLocalPath(t *testing.T) {
	for raw, want := range map[string]string{
		"/dashboard":             "/dashboard",
		"/devices?q=core&page=2": "/devices?q=core&page=2",
		"":                       "/",
		"dashboard":              "/",
		"//evil.example/x":       "/",
		"/\\evil.example":        "/",
		"https://evil.example":   "/",
		"/ok\r\nSet-Cookie: x":   "/",
		"javascript:alert(1)":    "/",
	} {
		if got := LocalPath(raw, "/"); got != want {
			t.Errorf("LocalPath(%q) = %q, want %q", raw, got, want)
		}
	}
}
