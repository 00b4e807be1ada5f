//go:build packed

package embed

import _ "embed"

// packed is the archive `go run ./embed/pack` writes from the tree.
//
//go:embed packed.gz
var packed []byte

func init() {
	tree, err := OpenArchive(packed)
	if err != nil {
		panic("embed: the packed archive is damaged: " + err.Error())
	}
	// One tree serves all four: each reads its own paths.
	Migrations, I18n, Docs, UI = tree, tree, tree, tree
}
