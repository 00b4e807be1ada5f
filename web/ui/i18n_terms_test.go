package ui_test

import (
	"io/fs"
	"strings"
	"testing"

	"backupd/embed"
)

// The Chinese texts call a notification channel 通道 everywhere (pages,
// e-mail, API description): one word, not 通道 here and 渠道 there.
func TestChineseChannelTerm(t *testing.T) {
	checked := 0
	err := fs.WalkDir(embed.I18n, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".zh.json") {
			return err
		}
		raw, err := fs.ReadFile(embed.I18n, path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "渠道") {
				t.Errorf("%s:%d says 渠道; the term is 通道: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil || checked < 3 {
		t.Fatalf("checked %d Chinese catalogs: %v", checked, err)
	}
}
