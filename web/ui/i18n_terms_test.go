package ui_test

import (
	"encoding/json"
	"fmt"
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

// A restore puts a stored configuration back: 还原 in Chinese, and
// approving it 审批 or 批准. 恢复 is the recovery codes' word (and a
// backup's recovery from failure), never a restore's: every Chinese text
// of a restore says 还原 and none says 恢复.
func TestChineseRestoreTerm(t *testing.T) {
	zh := map[string]string{}
	err := fs.WalkDir(embed.I18n, "i18n/ui", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".zh.json") {
			return err
		}
		raw, err := fs.ReadFile(embed.I18n, path)
		if err != nil {
			return err
		}
		area := map[string]string{}
		if err := json.Unmarshal(raw, &area); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for k, v := range area {
			zh[k] = v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for k, v := range zh {
		if !strings.Contains(k, "restore") {
			continue
		}
		checked++
		if strings.Contains(v, "恢复") {
			t.Errorf("%s says 恢复; a restore is 还原: %s", k, v)
		}
	}
	for _, k := range []string{"nav.restores", "restores.title", "device.version.restore.button", "restores.decide.approve", "settings.restore.title"} {
		if !strings.Contains(zh[k], "还原") && !strings.Contains(zh[k], "批准") && !strings.Contains(zh[k], "审批") {
			t.Errorf("%s = %q names neither 还原 nor 审批/批准", k, zh[k])
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d restore texts", checked)
	}
}
