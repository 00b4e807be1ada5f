package importer

import (
	"fmt"
	"strings"
	"testing"
)

// TestRancidReleaseTypes imports a router.db naming RANCID 3.13's
// per-release and alias types for devices backupd supports (issue 24):
// each line becomes a device of the platform, none is skipped as an
// unknown model. The full tables are app/collect/driver's
// TestForeignNames.
func TestRancidReleaseTypes(t *testing.T) {
	want := map[string]string{
		"ios-xr": "cisco_xr", "ios-xr7": "cisco_xr", "cisco-xr7": "cisco_xr", "ios-exr": "cisco_xr", "cisco-exr": "cisco_xr",
		"ios-nx": "cisco_nxos", "ios-sb": "cisco_smb", "cisco-wlc8": "cisco_wlc",
		"dnos9": "dell_os9", "dnos10": "dell_os10", "junos-evo": "juniper_junos", "juniper-srx": "juniper_junos",
		"fortigate-full": "fortinet", "bigip13": "f5_tmos", "sros-md": "nokia_sros",
		"edgerouter": "ubiquiti_edgeos", "edgerouterbird": "ubiquiti_edgeos", "edgemax": "ubiquiti_edgeswitch",
	}
	var file strings.Builder
	for typ := range want {
		fmt.Fprintf(&file, "%s.example.net;%s;up;\n", typ, typ)
	}
	p, err := ParseRancid([]byte(file.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Skipped {
		t.Errorf("line %d (%s) skipped: %s", s.Line, s.Name, s.Code)
	}
	for _, e := range p.Entries {
		if typ := strings.TrimSuffix(e.Name, ".example.net"); e.Platform != want[typ] {
			t.Errorf("RANCID type %s imported as %q, want %s", typ, e.Platform, want[typ])
		}
	}
	if len(p.Entries) != len(want) {
		t.Errorf("%d devices from %d lines", len(p.Entries), len(want))
	}
}

// TestOxidizedModelAliases: Oxidized's models for platforms backupd
// has under another name import as that platform.
func TestOxidizedModelAliases(t *testing.T) {
	m, err := ParseMap("name=0,model=1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseOxidized([]byte("f10:dnos\nx1052:dellx\nlb4m:quantaos\n"), ":", m)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range p.Entries {
		got[e.Name] = e.Platform
	}
	if want := map[string]string{"f10": "dell_os9", "x1052": "dell_powerconnect", "lb4m": "broadcom_efos"}; fmt.Sprint(got) != fmt.Sprint(want) || len(p.Skipped) != 0 {
		t.Errorf("platforms %v (skipped %+v), want %v", got, p.Skipped, want)
	}
}
