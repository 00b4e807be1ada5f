package ui_test

import (
	"context"
	"net/http"
	"testing"

	"backupd/db"
)

// The dry run's reasons and the form's refusal of a template that does
// not parse are said in the reader's language (English is
// TestChangeSetDryRunReport's and TestChangeSetFormRefusals's): the page
// reads them from the service's codes, not from its English words.
func TestChangeSetDryRunReasonsInChinese(t *testing.T) {
	f := newChangeSetFixture(t)
	root := f.signedIn("root")
	root.header.Set("Accept-Language", "zh-CN")
	form := changeSetForm("中文试运行", "edge-frr", "core-sw")
	form.Set("template", "1")
	form.Set("body", "router bgp 65001\n neighbor {{.Vars.peer}} remote-as 65000\n")
	id := created(t, root.createChangeSet(form))
	p := root.get(changeSetPath(id))
	expectText(t, "zh dry run", p, "此设备的平台不支持推送。", "platform hp_procurve cannot take a push",
		"无法为此设备渲染模板：", `map has no entry for key "peer"`)

	if _, err := f.e.store.UpdateDevice(context.Background(), f.edge, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	expect(t, "dry run again", root.post(changeSetPath(id)+"/dry-run", nil), http.StatusSeeOther, changeSetPath(id)+"?done=dry_run")
	expectText(t, "zh disabled", root.get(changeSetPath(id)), "此设备已停用：启用后才能推送，然后重新试运行。")

	root.get("/change-sets/new")
	form = changeSetForm("坏模板", "edge-frr")
	form.Set("template", "1")
	form.Set("body", "neighbor {{.Vars.peer remote-as 65000\n")
	p = root.post("/change-sets", form)
	expect(t, "zh template", p, http.StatusUnprocessableEntity, "")
	expectText(t, "zh template", p, "模板无法解析：template: change set:1:")
}
