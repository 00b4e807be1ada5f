package syslog

import (
	"slices"
	"testing"
)

// Dell OS9 (FTOS) logs IOS's configuration message behind its unit tag;
// a login on the same unit is a near miss. Lines from the `show logging`
// output of an MXL blade switch (OS9 9.13) published in a public runbook,
// with the <PRI> a syslog server receives (local7.notice) added.
func init() {
	samples = append(samples,
		sample{"Dell MXL OS9 9.13 show logging (public runbook)",
			"<189>Jun 18 13:51:44 %STKUNIT0-M:CP %SYS-5-CONFIG_I: Configured from  console", "cisco-sys-config-i"},
		sample{"Dell MXL OS9 9.13 show logging (public runbook)",
			"<189>Jun 18 13:52:01 %STKUNIT0-M:CP %SEC-5-LOGIN_SUCCESS: Login successful on console", ""},
	)
}

// The shared IOS pattern names OS9 among the platforms that send it.
func TestPatternPlatformsPA(t *testing.T) {
	for _, p := range BuiltinPatterns() {
		if p.Name == "cisco-sys-config-i" {
			if !slices.Contains(p.Platforms, "dell_os9") {
				t.Errorf("cisco-sys-config-i names %v, not dell_os9", p.Platforms)
			}
			return
		}
	}
	t.Error("no cisco-sys-config-i pattern")
}
