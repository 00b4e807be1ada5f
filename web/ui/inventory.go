package ui

import "net/http"

// mountInventory registers groups (a tree), credentials and templates.
func (u *UI) mountInventory(mux *http.ServeMux) {}
